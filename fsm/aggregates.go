package fsm

import (
	"fmt"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableAggregates is the name of the table, for Index and blocking
// queries.
const TableAggregates = "aggregates"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableAggregates,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   {Name: "id", Unique: true, Indexer: &memdb.IntFieldIndex{Field: "ID"}},
				"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
				"host": {Name: "host", AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Hosts"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.AggregateSnapshot,
		table:      TableAggregates,
		newRecord:  func() any { return new(structs.Aggregate) },
	})
	registerApply(structs.AggregateUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.AggregateEntry
		if err := decodeBody(structs.AggregateUpdateType, body, &e); err != nil {
			return err
		}
		return s.ApplyAggregate(index, &e)
	})
}

// ApplyAggregate applies one aggregate change, checking Nova's rules
// against the state: names are unique, a host is in one availability
// zone at most, a zone cannot be renamed or set while the aggregate's
// hosts run instances, only an empty aggregate can be deleted.
func (s *StateStore) ApplyAggregate(index uint64, e *structs.AggregateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if e.Op == structs.AggregateOpCreate {
		if err := createAggregate(txn, index, e); err != nil {
			return err
		}
		return commitAt(txn, index, TableAggregates)
	}
	agg, err := first[*structs.Aggregate](txn, nil, TableAggregates, "id", e.AggregateID)
	if err != nil {
		return err
	}
	if agg == nil {
		return structs.Errorf(structs.KindNotFound, "Aggregate %d could not be found.", e.AggregateID)
	}
	c := agg.Copy()
	switch e.Op {
	case structs.AggregateOpUpdate:
		err = updateAggregate(txn, c, e)
	case structs.AggregateOpDelete:
		if len(agg.Hosts) > 0 {
			return structs.Errorf(structs.KindInvalid, "Cannot remove host from aggregate %d. Reason: Host aggregate is not empty.", agg.ID)
		}
		if err := txn.Delete(TableAggregates, agg); err != nil {
			return fmt.Errorf("delete aggregate %d: %w", agg.ID, err)
		}
		return commitAt(txn, index, TableAggregates)
	case structs.AggregateOpAddHost:
		err = addAggregateHost(txn, c, e.HostID)
	case structs.AggregateOpRemoveHost:
		if !c.HasHost(e.HostID) {
			return structs.Errorf(structs.KindNotFound, "Host %s is not in aggregate %d", e.HostID, agg.ID)
		}
		hosts := c.Hosts[:0]
		for _, h := range c.Hosts {
			if h != e.HostID {
				hosts = append(hosts, h)
			}
		}
		c.Hosts = hosts
	case structs.AggregateOpSetMetadata:
		err = setAggregateMetadata(txn, c, e)
	default:
		return structs.Errorf(structs.KindInvalid, "unknown aggregate operation %q", e.Op)
	}
	if err != nil {
		return err
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableAggregates, c); err != nil {
		return fmt.Errorf("update aggregate %d: %w", c.ID, err)
	}
	return commitAt(txn, index, TableAggregates)
}

func createAggregate(txn *memdb.Txn, index uint64, e *structs.AggregateEntry) error {
	if strings.TrimSpace(e.Name) == "" || len(e.Name) > 255 {
		return structs.Errorf(structs.KindInvalid, "Aggregate name must be 1-255 characters")
	}
	if err := uniqueAggregateName(txn, e.Name, 0); err != nil {
		return err
	}
	agg := &structs.Aggregate{ID: int64(index), UUID: e.UUID, Name: e.Name, Metadata: map[string]string{},
		CreatedAt: e.At, CreateIndex: index, ModifyIndex: index}
	if e.AZ != nil && *e.AZ != "" {
		agg.Metadata[structs.AggregateAZKey] = *e.AZ
	}
	if err := txn.Insert(TableAggregates, agg); err != nil {
		return fmt.Errorf("insert aggregate %s: %w", e.Name, err)
	}
	return nil
}

func uniqueAggregateName(txn *memdb.Txn, name string, self int64) error {
	other, err := first[*structs.Aggregate](txn, nil, TableAggregates, "name", name)
	if err != nil {
		return err
	}
	if other != nil && other.ID != self {
		return structs.Errorf(structs.KindConflict, "Aggregate %s already exists.", name)
	}
	return nil
}

// updateAggregate renames c and changes its zone (Nova's update: errors
// are "Cannot update aggregate").
func updateAggregate(txn *memdb.Txn, c *structs.Aggregate, e *structs.AggregateEntry) error {
	if e.Name != "" {
		if err := uniqueAggregateName(txn, e.Name, c.ID); err != nil {
			return err
		}
		c.Name = e.Name
	}
	if e.AZ != nil {
		reason, err := zoneChangeRefused(txn, c, *e.AZ)
		if err != nil {
			return err
		}
		if reason != "" {
			return structs.Errorf(structs.KindInvalid, "Cannot update aggregate %d. Reason: %s.", c.ID, reason)
		}
		c.Metadata[structs.AggregateAZKey] = *e.AZ
	}
	c.UpdatedAt = e.At
	return nil
}

// setAggregateMetadata merges metadata into c; a zone change obeys the
// same rules as update's.
func setAggregateMetadata(txn *memdb.Txn, c *structs.Aggregate, e *structs.AggregateEntry) error {
	az, setsZone := e.SetMetadata[structs.AggregateAZKey]
	deletesZone := false
	for _, k := range e.DeleteMetadata {
		deletesZone = deletesZone || k == structs.AggregateAZKey
	}
	if setsZone || deletesZone {
		reason, err := zoneChangeRefused(txn, c, az)
		if err != nil {
			return err
		}
		if reason != "" {
			return structs.Errorf(structs.KindInvalid, "Cannot update metadata of aggregate %d. Reason: %s.", c.ID, reason)
		}
	}
	for k, v := range e.SetMetadata {
		c.Metadata[k] = v
	}
	for _, k := range e.DeleteMetadata {
		delete(c.Metadata, k)
	}
	c.UpdatedAt = e.At
	return nil
}

// zoneChangeRefused says why c cannot become zone az ("" when it can):
// an empty name, a host of c in another zone's aggregate, or, when the
// zone changes, a host of c running instances (Nova's
// is_safe_to_update_az).
func zoneChangeRefused(txn *memdb.Txn, c *structs.Aggregate, az string) (string, error) {
	if az == "" {
		return fmt.Sprintf("Aggregate %s does not support empty named availability zone", c.Name), nil
	}
	conflicts, err := conflictingZones(txn, c.ID, c.Hosts, az)
	if err != nil || len(conflicts) > 0 {
		return zonesReason(conflicts), err
	}
	if c.AZ() == az {
		return "", nil
	}
	for _, h := range c.Hosts {
		insts, err := list[*structs.Instance](txn, nil, TableInstances, "host", h)
		if err != nil {
			return "", err
		}
		if len(insts) > 0 {
			return "One or more hosts contain instances in this zone", nil
		}
	}
	return "", nil
}

// conflictingZones lists the zones other than az of the aggregates
// (other than self) that contain one of hosts.
func conflictingZones(txn *memdb.Txn, self int64, hosts []string, az string) ([]string, error) {
	var out []string
	for _, h := range hosts {
		aggs, err := list[*structs.Aggregate](txn, nil, TableAggregates, "host", h)
		if err != nil {
			return nil, err
		}
		for _, a := range aggs {
			if z := a.AZ(); z != "" && z != az && a.ID != self && !containsStr(out, z) {
				out = append(out, z)
			}
		}
	}
	return out, nil
}

// zonesReason is Nova's message naming conflicting zones as a Python
// list.
func zonesReason(zones []string) string {
	if len(zones) == 0 {
		return ""
	}
	quoted := make([]string, len(zones))
	for i, z := range zones {
		quoted[i] = "'" + z + "'"
	}
	return "One or more hosts already in availability zone(s) [" + strings.Join(quoted, ", ") + "]"
}

func addAggregateHost(txn *memdb.Txn, c *structs.Aggregate, hostID string) error {
	host, err := first[*structs.Host](txn, nil, TableHosts, "id", hostID)
	if err != nil {
		return err
	}
	if host == nil {
		return structs.Errorf(structs.KindNotFound, "Compute host %s could not be found.", hostID)
	}
	if c.HasHost(hostID) {
		return structs.Errorf(structs.KindConflict, "The aggregate %d already has host %s.", c.ID, host.Name)
	}
	if az := c.AZ(); az != "" {
		conflicts, err := conflictingZones(txn, c.ID, []string{hostID}, az)
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			return structs.Errorf(structs.KindConflict, "Cannot add host to aggregate %d. Reason: %s.", c.ID, zonesReason(conflicts))
		}
	}
	c.Hosts = append(c.Hosts, hostID)
	return nil
}

// AggregateByID returns an aggregate or nil.
func (s *StateStore) AggregateByID(ws memdb.WatchSet, id int64) (*structs.Aggregate, error) {
	return first[*structs.Aggregate](s.ReadTxn(), ws, TableAggregates, "id", id)
}

// Aggregates lists every aggregate by id.
func (s *StateStore) Aggregates(ws memdb.WatchSet) ([]*structs.Aggregate, error) {
	return list[*structs.Aggregate](s.ReadTxn(), ws, TableAggregates)
}

// AggregatesByHost lists the aggregates that contain a host.
func (s *StateStore) AggregatesByHost(ws memdb.WatchSet, hostID string) ([]*structs.Aggregate, error) {
	return list[*structs.Aggregate](s.ReadTxn(), ws, TableAggregates, "host", hostID)
}

// HostZone is a host's effective availability zone (see
// structs.EffectiveAZ).
func (s *StateStore) HostZone(ws memdb.WatchSet, h *structs.Host) (string, error) {
	return hostZone(s.ReadTxn(), ws, h)
}

func hostZone(txn *memdb.Txn, ws memdb.WatchSet, h *structs.Host) (string, error) {
	aggs, err := list[*structs.Aggregate](txn, ws, TableAggregates, "host", h.ID)
	if err != nil {
		return "", err
	}
	return structs.EffectiveAZ(h, aggs), nil
}

// AvailabilityZones maps each zone that has hosts to its hosts, sorted
// by name.
func (s *StateStore) AvailabilityZones(ws memdb.WatchSet) (map[string][]*structs.Host, error) {
	txn := s.ReadTxn()
	hosts, err := list[*structs.Host](txn, ws, TableHosts)
	if err != nil {
		return nil, err
	}
	aggs, err := list[*structs.Aggregate](txn, ws, TableAggregates)
	if err != nil {
		return nil, err
	}
	out := map[string][]*structs.Host{}
	for _, h := range hosts {
		z := structs.EffectiveAZ(h, aggs)
		out[z] = append(out[z], h)
	}
	for _, hs := range out {
		sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	}
	return out, nil
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
