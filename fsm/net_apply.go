package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Networking's replicated state (networks.go, ports.go,
// security_groups.go, routers.go) changes only through NetApplyEntry:
// an ordered list of changes applied in one transaction. Everything a
// concurrent change could invalidate is decided here, from the state,
// so that every server computes the same result and two proposals can
// never both win: addresses (the lowest free one of a subnet's pools),
// VNIs, MAC and address uniqueness, references between objects,
// "in use" refusals and the projects' quotas. IDs, MACs and timestamps
// arrive in the entry.

// netTables are the tables a networking change may touch.
var netTables = []string{TableNetworks, TableSubnets, TablePorts, TableSecurityGroups,
	TableSecurityGroupRules, TableFloatingIPs, TableRouters}

func init() {
	registerApply(structs.NetApplyType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.NetApplyEntry
		if err := decodeBody(structs.NetApplyType, body, &e); err != nil {
			return err
		}
		return s.ApplyNet(index, &e)
	})
}

// ApplyNet applies a networking entry: all its changes or none.
func (s *StateStore) ApplyNet(index uint64, e *structs.NetApplyEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if err := applyNetChanges(txn, index, e.At, e.Changes); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// netTxn applies changes inside a write transaction.
type netTxn struct {
	txn   *memdb.Txn
	index uint64
	at    int64
	// created counts what the changes created, by project and quota
	// resource, for the quota check that ends them.
	created map[string]map[string]int64
	touched map[string]bool
}

// applyNetChanges applies changes in txn and stamps the tables they
// touched; the caller commits. Instance creates call it with their
// ports.
func applyNetChanges(txn *memdb.Txn, index uint64, at int64, changes []*structs.NetChange) error {
	if len(changes) == 0 {
		return nil
	}
	t := &netTxn{txn: txn, index: index, at: at, created: map[string]map[string]int64{}, touched: map[string]bool{}}
	for i, c := range changes {
		if c == nil {
			return structs.Errorf(structs.KindInvalid, "networking change %d is empty", i)
		}
		if err := t.apply(c); err != nil {
			return err
		}
	}
	return t.finish()
}

func (t *netTxn) apply(c *structs.NetChange) error {
	switch c.Op {
	case structs.NetOpCreate, structs.NetOpEnsure, structs.NetOpUpdate, structs.NetOpDelete:
	default:
		return structs.Errorf(structs.KindInvalid, "unknown networking operation %q", c.Op)
	}
	k, ok := netKinds[c.Kind]
	if !ok {
		return unknownNetKind(c.Kind)
	}
	return k.apply(t, c)
}

// finish checks the quotas of what was created and stamps the tables.
func (t *netTxn) finish() error {
	projects := make([]string, 0, len(t.created))
	for p := range t.created {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	for _, p := range projects {
		if err := t.checkQuota(p, t.created[p]); err != nil {
			return err
		}
	}
	for _, table := range netTables {
		if t.touched[table] {
			if err := setIndex(t.txn, table, t.index); err != nil {
				return err
			}
		}
	}
	return nil
}

// countCreate records one created object of a project for the quota.
func (t *netTxn) countCreate(project, resource string) {
	if project == "" {
		return
	}
	m, ok := t.created[project]
	if !ok {
		m = map[string]int64{}
		t.created[project] = m
	}
	m[resource]++
}

// quotaTables maps each network quota resource to its table.
var quotaTables = map[string]string{
	structs.QuotaNetwork: TableNetworks, structs.QuotaSubnet: TableSubnets, structs.QuotaPort: TablePorts,
	structs.QuotaRouter: TableRouters, structs.QuotaFloatingIP: TableFloatingIPs,
	structs.QuotaSecurityGroup: TableSecurityGroups, structs.QuotaSecurityGroupRule: TableSecurityGroupRules,
}

// checkQuota checks, for each resource the changes created in a
// project, that the project's count now is within its limit. Neutron's
// OverQuota names every resource over.
func (t *netTxn) checkQuota(project string, created map[string]int64) error {
	var over []string
	for _, r := range sortedKeys(created) {
		limit := quotaLimit(t.txn, project, r)
		if limit < 0 {
			continue
		}
		it, err := t.txn.Get(quotaTables[r], "project", project)
		if err != nil {
			return fmt.Errorf("count %s of %s: %w", r, project, err)
		}
		var n int64
		for raw := it.Next(); raw != nil; raw = it.Next() {
			n++
		}
		if n > limit {
			over = append(over, r)
		}
	}
	if len(over) > 0 {
		return structs.NetOverQuota(over...)
	}
	return nil
}

// NetworkQuotaUsage counts a project's networking objects by quota
// resource.
func (s *StateStore) NetworkQuotaUsage(ws memdb.WatchSet, projectID string) (map[string]int64, error) {
	txn := s.ReadTxn()
	out := map[string]int64{}
	for r, table := range quotaTables {
		it, err := txn.Get(table, "project", projectID)
		if err != nil {
			return nil, err
		}
		if ws != nil {
			ws.Add(it.WatchCh())
		}
		var n int64
		for raw := it.Next(); raw != nil; raw = it.Next() {
			n++
		}
		out[r] = n
	}
	return out, nil
}

// stale is the error of an update whose object changed since it was
// read; the proposer reads again and retries.
func stale(kind, id string) error {
	return structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "%s %s was changed concurrently; retry", kind, id)
}

// NetStale reports whether err is an update that lost a race (see
// NetChange.Expect), which the proposer may retry.
func NetStale(err error) bool {
	return structs.ErrorType(err) == structs.ErrConflict && structs.KindOf(err) == structs.KindConflict
}

// exists is the error of a create whose id is taken.
func exists(kind, id string) error {
	return structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "%s %s already exists", kind, id)
}

// checkChange applies the rules every change of a network object
// shares, given whether the object is stored and (lazily) its
// ModifyIndex: an update needs the object, still at the expected index
// when one is given; ensuring an object that exists changes nothing
// (done); creating one that exists is a conflict.
func checkChange(c *structs.NetChange, kind, id string, found bool, modifyIndex func() uint64) (done bool, err error) {
	switch {
	case c.Op == structs.NetOpUpdate && !found:
		return false, structs.NetNotFound(kind, id)
	case c.Op == structs.NetOpUpdate && c.Expect != 0 && modifyIndex() != c.Expect:
		return false, stale(kind, id)
	case c.Op == structs.NetOpEnsure && found:
		return true, nil
	case c.Op == structs.NetOpCreate && found:
		return false, exists(kind, id)
	}
	return false, nil
}

// stamp sets the indexes, times and revision of an object being
// written over old (nil for a new one).
func (t *netTxn) stamps(oldCreate uint64, oldCreated int64, oldRev uint64) (create uint64, created int64, rev uint64) {
	if oldCreate == 0 {
		return t.index, t.at, 1
	}
	return oldCreate, oldCreated, oldRev + 1
}

// insert writes obj into table, marking it touched.
func (t *netTxn) insert(table string, obj any) error {
	t.touched[table] = true
	if err := t.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}

// remove deletes obj from table, marking it touched.
func (t *netTxn) remove(table string, obj any) error {
	t.touched[table] = true
	if err := t.txn.Delete(table, obj); err != nil {
		return fmt.Errorf("delete from %s: %w", table, err)
	}
	return nil
}

// releaseInstancePorts deletes the ports created for an instance and
// unbinds those its user handed it (PreserveOnDelete), in the
// transaction that purges it; their addresses return to their pools and
// their floating IPs are disassociated.
func releaseInstancePorts(txn *memdb.Txn, index uint64, at int64, instanceID string) error {
	ports, err := list[*structs.Port](txn, nil, TablePorts, "device", instanceID)
	if err != nil || len(ports) == 0 {
		return err
	}
	var changes []*structs.NetChange
	for _, p := range ports {
		if !p.IsCompute() {
			continue
		}
		if p.PreserveOnDelete {
			c := p.Copy()
			c.DeviceID, c.DeviceOwner, c.BindingHostID, c.PreserveOnDelete, c.Tag, c.DeviceSeq = "", "", "", false, "", 0
			changes = append(changes, &structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Port: c})
			continue
		}
		changes = append(changes, &structs.NetChange{Op: structs.NetOpDelete, Kind: structs.NetKindPort, ID: p.ID})
	}
	return applyNetChanges(txn, index, at, changes)
}

// NetworkQuotaLimits returns a project's effective limit of every
// network resource (the default class's for "").
func (s *StateStore) NetworkQuotaLimits(ws memdb.WatchSet, projectID string) map[string]int64 {
	txn := s.ReadTxn()
	out := make(map[string]int64, len(structs.NetworkDefaultQuotas))
	for r := range structs.NetworkDefaultQuotas {
		out[r] = quotaLimitWatch(txn, ws, projectID, r)
	}
	return out
}
