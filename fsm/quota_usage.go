package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Usage counters of the instance quotas. Every write of the instances
// table goes through insertInstance, replaceInstance or removeInstance,
// which move the instance's quota use (structs.Instance.QuotaUse) from
// its old version's counters to its new version's, in the same
// transaction; a boot's quota check then reads two counters instead of
// walking the project's instances, which made a create O(instances in
// the project). The counters are derived state: snapshots do not carry
// them and a restore rebuilds them from the instances, so the snapshot
// format is unchanged and a counter can never disagree with a restored
// state. A counter that falls to zero is dropped.

const (
	// tableProjectUsage holds one structs.InstanceQuotaUsage per project.
	tableProjectUsage = "quota_usage_projects"
	// tableUserUsage holds one per (project, user).
	tableUserUsage = "quota_usage_users"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name:    tableProjectUsage,
			Indexes: map[string]*memdb.IndexSchema{"id": idIndex("ProjectID")},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: tableUserUsage,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "ProjectID"},
					&memdb.StringFieldIndex{Field: "UserID"},
				}}},
			},
		}
	})
	registerRestoreHook(rebuildInstanceUsage)
}

// insertInstance stores inst (a copy the caller owns and no longer
// changes), replacing the instance with its id if any, and keeps the
// usage counters in step.
func insertInstance(txn *memdb.Txn, inst *structs.Instance) error {
	raw, err := txn.First(TableInstances, "id", inst.ID)
	if err != nil {
		return fmt.Errorf("instance lookup %s: %w", inst.ID, err)
	}
	old, _ := raw.(*structs.Instance)
	return replaceInstance(txn, old, inst)
}

// storedVersions reads the stored version of each instance (nil for a
// new one) before any is written: the version insts[i] replaces, which
// is an earlier element of insts when an id repeats.
//
// Reading every instance first, then writing them all, is what keeps a
// batch's writes cheap: go-memdb reads inside a write transaction from
// a clone of the index's radix transaction, and the clone makes the
// transaction forget which nodes it may change in place, so a read
// between two writes made the next write copy its whole path again,
// a 256-edge node near the root of a UUID-keyed index among them.
func storedVersions(txn *memdb.Txn, insts []*structs.Instance) ([]*structs.Instance, error) {
	olds := make([]*structs.Instance, len(insts))
	var seen map[string]*structs.Instance
	if len(insts) > 1 {
		seen = make(map[string]*structs.Instance, len(insts))
	}
	for i, inst := range insts {
		if prev, ok := seen[inst.ID]; ok {
			olds[i] = prev
		} else {
			old, err := first[*structs.Instance](txn, nil, TableInstances, "id", inst.ID)
			if err != nil {
				return nil, err
			}
			olds[i] = old
		}
		if seen != nil {
			seen[inst.ID] = inst
		}
	}
	return olds, nil
}

// replaceInstance stores inst in place of old, the stored version of
// the same instance (nil when it is new).
func replaceInstance(txn *memdb.Txn, old, inst *structs.Instance) error {
	internInstance(inst)
	if err := txn.Insert(TableInstances, inst); err != nil {
		return fmt.Errorf("store instance %s: %w", inst.ID, err)
	}
	return trackInstanceUsage(txn, old, inst)
}

// removeInstance deletes a stored instance and releases its usage.
func removeInstance(txn *memdb.Txn, old *structs.Instance) error {
	if err := txn.Delete(TableInstances, old); err != nil {
		return fmt.Errorf("delete instance %s: %w", old.ID, err)
	}
	return trackInstanceUsage(txn, old, nil)
}

// trackInstanceUsage moves an instance's quota use from its old
// version's project and user to its new version's (either may be nil).
func trackInstanceUsage(txn *memdb.Txn, old, inst *structs.Instance) error {
	on, oc, or := old.QuotaUse()
	nn, nc, nr := inst.QuotaUse()
	if old != nil && inst != nil && old.ProjectID == inst.ProjectID && old.UserID == inst.UserID {
		if on == nn && oc == nc && or == nr {
			return nil
		}
		return addInstanceUsage(txn, inst.ProjectID, inst.UserID, nn-on, nc-oc, nr-or)
	}
	if on != 0 {
		if err := addInstanceUsage(txn, old.ProjectID, old.UserID, -on, -oc, -or); err != nil {
			return err
		}
	}
	if nn != 0 {
		return addInstanceUsage(txn, inst.ProjectID, inst.UserID, nn, nc, nr)
	}
	return nil
}

// addInstanceUsage adds to a project's counter and, when userID is
// set, to its user's.
func addInstanceUsage(txn *memdb.Txn, projectID, userID string, n, cores, ram int64) error {
	if projectID == "" {
		return nil
	}
	if err := addUsageRow(txn, tableProjectUsage, projectID, "", n, cores, ram); err != nil {
		return err
	}
	if userID == "" {
		return nil
	}
	return addUsageRow(txn, tableUserUsage, projectID, userID, n, cores, ram)
}

func addUsageRow(txn *memdb.Txn, table, projectID, userID string, n, cores, ram int64) error {
	key := []any{projectID}
	if table == tableUserUsage {
		key = append(key, userID)
	}
	raw, err := txn.First(table, "id", key...)
	if err != nil {
		return fmt.Errorf("quota usage of %s %s: %w", projectID, userID, err)
	}
	u := &structs.InstanceQuotaUsage{ProjectID: projectID, UserID: userID}
	if raw != nil {
		c := *raw.(*structs.InstanceQuotaUsage)
		u = &c
	}
	u.Add(n, cores, ram)
	if u.Zero() {
		if raw == nil {
			return nil
		}
		if err := txn.Delete(table, raw); err != nil {
			return fmt.Errorf("drop quota usage of %s %s: %w", projectID, userID, err)
		}
		return nil
	}
	if err := txn.Insert(table, u); err != nil {
		return fmt.Errorf("store quota usage of %s %s: %w", projectID, userID, err)
	}
	return nil
}

// rebuildInstanceUsage recounts every counter from the instances, after
// a restore has inserted them.
func rebuildInstanceUsage(txn *memdb.Txn) error {
	for _, table := range []string{tableProjectUsage, tableUserUsage} {
		if _, err := txn.DeleteAll(table, "id"); err != nil {
			return fmt.Errorf("clear %s: %w", table, err)
		}
	}
	type key struct{ project, user string }
	sums := map[key]*structs.InstanceQuotaUsage{}
	var order []key
	add := func(k key, n, cores, ram int64) {
		u, ok := sums[k]
		if !ok {
			u = &structs.InstanceQuotaUsage{ProjectID: k.project, UserID: k.user}
			sums[k] = u
			order = append(order, k)
		}
		u.Add(n, cores, ram)
	}
	it, err := txn.Get(TableInstances, "id")
	if err != nil {
		return fmt.Errorf("list instances: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		inst := raw.(*structs.Instance)
		n, cores, ram := inst.QuotaUse()
		if n == 0 {
			continue
		}
		add(key{inst.ProjectID, ""}, n, cores, ram)
		if inst.UserID != "" {
			add(key{inst.ProjectID, inst.UserID}, n, cores, ram)
		}
	}
	for _, k := range order {
		table := tableProjectUsage
		if k.user != "" {
			table = tableUserUsage
		}
		if err := txn.Insert(table, sums[k]); err != nil {
			return fmt.Errorf("store quota usage of %s %s: %w", k.project, k.user, err)
		}
	}
	return nil
}

// projectUsage is what a project uses of the instance quotas (see
// structs.Instance.QuotaUse), read from its counter.
func projectUsage(txn *memdb.Txn, ws memdb.WatchSet, projectID string) (map[string]int64, error) {
	if projectID == "" {
		return (*structs.InstanceQuotaUsage)(nil).Map(), nil
	}
	u, err := first[*structs.InstanceQuotaUsage](txn, ws, tableProjectUsage, "id", projectID)
	if err != nil {
		return nil, err
	}
	return u.Map(), nil
}

// userUsage is what a user uses of the instance quotas in a project,
// read from its counter, with a zero count of server groups for the
// caller to fill.
func userUsage(txn *memdb.Txn, ws memdb.WatchSet, projectID, userID string) (map[string]int64, error) {
	var u *structs.InstanceQuotaUsage
	if projectID != "" && userID != "" {
		var err error
		if u, err = first[*structs.InstanceQuotaUsage](txn, ws, tableUserUsage, "id", projectID, userID); err != nil {
			return nil, err
		}
	}
	used := u.Map()
	used[structs.QuotaServerGroups] = 0
	return used, nil
}
