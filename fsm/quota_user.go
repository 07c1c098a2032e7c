package fsm

import (
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableUserQuotas is the name of the per-user quota table, for Index
// and blocking queries.
const TableUserQuotas = "user_quotas"

// Per-user quotas (Nova's os-quota-sets/{project}?user_id=U) are a
// user's own limits inside a project. A boot is checked against the
// project's limits (quotas.go) and then against its user's, in the same
// transaction; instances, cores and ram come from the user's usage
// counter (quota_usage.go), like the project's.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableUserQuotas,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "ProjectID"},
					&memdb.StringFieldIndex{Field: "UserID"},
				}}},
				"project": {Name: "project", Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.UserQuotaSnapshot,
		table:      TableUserQuotas,
		newRecord:  func() any { return new(structs.UserQuotaSet) },
	})
	registerApply(structs.UserQuotaUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.UserQuotaEntry
		if err := decodeBody(structs.UserQuotaUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateUserQuotas(index, &e)
	})
}

// UpdateUserQuotas sets or drops a user's limits in a project.
func (s *StateStore) UpdateUserQuotas(index uint64, e *structs.UserQuotaEntry) error {
	if e.ProjectID == "" || e.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "user quota update without a project and a user")
	}
	if err := checkLimits(e.Set, structs.DefaultQuotas); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.UserQuotaSet](txn, nil, TableUserQuotas, "id", e.ProjectID, e.UserID)
	if err != nil {
		return err
	}
	if e.Delete {
		if existing != nil {
			if err := txn.Delete(TableUserQuotas, existing); err != nil {
				return fmt.Errorf("delete quotas of user %s in %s: %w", e.UserID, e.ProjectID, err)
			}
		}
		return commitAt(txn, index, TableUserQuotas)
	}
	q := &structs.UserQuotaSet{ProjectID: e.ProjectID, UserID: e.UserID, Limits: map[string]int64{}, CreateIndex: index}
	if existing != nil {
		q = existing.Copy()
		if q.Limits == nil {
			q.Limits = map[string]int64{}
		}
	}
	for k, v := range e.Set {
		q.Limits[k] = v
	}
	q.ModifyIndex = index
	if err := txn.Insert(TableUserQuotas, q); err != nil {
		return fmt.Errorf("store quotas of user %s in %s: %w", e.UserID, e.ProjectID, err)
	}
	return commitAt(txn, index, TableUserQuotas)
}

// userQuotaLimit is a user's limit of a resource in a project: the
// user's own, else the project's effective limit.
func userQuotaLimit(txn *memdb.Txn, ws memdb.WatchSet, projectID, userID, resource string) int64 {
	if projectID != "" && userID != "" {
		if q, err := first[*structs.UserQuotaSet](txn, ws, TableUserQuotas, "id", projectID, userID); err == nil && q != nil {
			if v, ok := q.Limits[resource]; ok {
				return v
			}
		}
	}
	return quotaLimitWatch(txn, ws, projectID, resource)
}

// UserQuotaLimits returns a user's effective limit of every resource in
// a project.
func (s *StateStore) UserQuotaLimits(ws memdb.WatchSet, projectID, userID string) map[string]int64 {
	txn := s.ReadTxn()
	out := make(map[string]int64, len(structs.DefaultQuotas))
	for _, r := range structs.QuotaResources() {
		out[r] = userQuotaLimit(txn, ws, projectID, userID, r)
	}
	return out
}

// UserQuotaUsage counts what a user uses in a project: its instances,
// their cores and ram (as projectUsage counts them), its server groups
// there and its key pairs.
func (s *StateStore) UserQuotaUsage(ws memdb.WatchSet, projectID, userID string) (map[string]int64, error) {
	txn := s.ReadTxn()
	used, err := userUsage(txn, ws, projectID, userID)
	if err != nil {
		return nil, err
	}
	groups, err := list[*structs.ServerGroup](txn, ws, TableServerGroups, "project", projectID)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g.UserID == userID {
			used[structs.QuotaServerGroups]++
		}
	}
	kps, err := list[*structs.KeyPair](txn, ws, TableKeyPairs, "user", userID)
	if err != nil {
		return nil, err
	}
	used[structs.QuotaKeyPairs] = int64(len(kps))
	return used, nil
}

// checkUserQuotas checks an instance create against the user quotas of
// each (project, user) it creates instances for, after the projects'
// own check passed. Users without limits of their own pass at once.
func checkUserQuotas(txn *memdb.Txn, instances []*structs.Instance, fallback *structs.Flavor) error {
	type key struct{ project, user string }
	requested := map[key]map[string]int64{}
	var order []key
	for _, inst := range instances {
		if inst == nil || inst.ProjectID == "" || inst.UserID == "" {
			continue
		}
		k := key{inst.ProjectID, inst.UserID}
		r, ok := requested[k]
		if !ok {
			r = map[string]int64{}
			requested[k] = r
			order = append(order, k)
		}
		f := inst.Flavor
		if f == nil {
			f = fallback
		}
		cores, ram := flavorSize(f)
		r[structs.QuotaInstances]++
		r[structs.QuotaCores] += cores
		r[structs.QuotaRAM] += ram
	}
	for _, k := range order {
		own, err := first[*structs.UserQuotaSet](txn, nil, TableUserQuotas, "id", k.project, k.user)
		if err != nil {
			return err
		}
		if own == nil {
			continue
		}
		if err := checkUserQuota(txn, k.project, k.user, requested[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkUserQuota checks requested instances, cores and ram against a
// user's limits, with the message of checkProjectQuota.
func checkUserQuota(txn *memdb.Txn, projectID, userID string, requested map[string]int64) error {
	used, err := userUsage(txn, nil, projectID, userID)
	if err != nil {
		return err
	}
	var overs, reqs, useds, limits []string
	for _, r := range instanceResources {
		n := requested[r]
		if n <= 0 {
			continue
		}
		limit := userQuotaLimit(txn, nil, projectID, userID, r)
		if limit < 0 || used[r]+n <= limit {
			continue
		}
		overs = append(overs, r)
		reqs = append(reqs, fmt.Sprint(n))
		useds = append(useds, fmt.Sprint(used[r]))
		limits = append(limits, fmt.Sprint(limit))
	}
	if len(overs) == 0 {
		return nil
	}
	o := strings.Join(overs, ", ")
	return structs.Errorf(structs.KindQuotaReached, "Quota exceeded for %s: Requested %s, but already used %s of %s %s",
		o, strings.Join(reqs, ", "), strings.Join(useds, ", "), strings.Join(limits, ", "), o)
}

// keyPairLimit is a key pair owner's key_pairs limit: its own in its
// default project when it has one, else that project's.
func keyPairLimit(txn *memdb.Txn, project, userID string) int64 {
	return userQuotaLimit(txn, nil, project, userID, structs.QuotaKeyPairs)
}

// deleteUserQuotas drops the user limits of a project.
func deleteUserQuotas(txn *memdb.Txn, projectID string) error {
	if _, err := txn.DeleteAll(TableUserQuotas, "project", projectID); err != nil {
		return fmt.Errorf("delete user quotas of %s: %w", projectID, err)
	}
	return nil
}
