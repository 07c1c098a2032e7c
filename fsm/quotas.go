package fsm

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableQuotas is the name of the table, for Index and blocking queries.
const TableQuotas = "quotas"

// Quotas are checked and consumed in the same transaction as the write
// that consumes them (an instance create, a key pair, a server group, a
// metadata update), so concurrent requests can never exceed one: each
// Raft entry sees every entry before it. Instances, cores and ram are
// read from usage counters the FSM keeps on every instance write
// (quota_usage.go); key pairs and groups are counted from their tables
// (key pairs by user, groups by project). Instances without a project
// (the native API's operator calls) count against no quota.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableQuotas,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Scope"},
					&memdb.StringFieldIndex{Field: "ID"},
				}}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.QuotaSnapshot,
		table:      TableQuotas,
		newRecord:  func() any { return new(structs.QuotaSet) },
	})
	registerApply(structs.QuotaUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.QuotaEntry
		if err := decodeBody(structs.QuotaUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateQuotas(index, &e)
	})
}

// UpdateQuotas sets or drops a project's or a class's limits.
func (s *StateStore) UpdateQuotas(index uint64, e *structs.QuotaEntry) error {
	return s.updateQuotaSet(index, e, structs.DefaultQuotas, structs.NetworkDefaultQuotas)
}

// updateQuotaSet is UpdateQuotas for the resources the known tables
// name.
func (s *StateStore) updateQuotaSet(index uint64, e *structs.QuotaEntry, known ...map[string]int64) error {
	if e.Scope != structs.QuotaScopeProject && e.Scope != structs.QuotaScopeClass {
		return structs.Errorf(structs.KindInvalid, "unknown quota scope %q", e.Scope)
	}
	if e.ID == "" {
		return structs.Errorf(structs.KindInvalid, "quota update without a project or class")
	}
	if err := checkLimits(e.Set, known...); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	if e.CheckUsage && e.Scope == structs.QuotaScopeProject && !e.Delete {
		if err := checkNotBelowUsage(txn, e.ID, e.Set); err != nil {
			return err
		}
	}
	existing, err := first[*structs.QuotaSet](txn, nil, TableQuotas, "id", e.Scope, e.ID)
	if err != nil {
		return err
	}
	if e.Delete {
		if existing != nil {
			if err := txn.Delete(TableQuotas, existing); err != nil {
				return fmt.Errorf("delete quotas of %s: %w", e.ID, err)
			}
		}
		if e.Scope == structs.QuotaScopeProject {
			// As Nova's, a project's delete drops its users' limits too.
			if err := deleteUserQuotas(txn, e.ID); err != nil {
				return err
			}
			return commitAt(txn, index, TableQuotas, TableUserQuotas)
		}
		return commitAt(txn, index, TableQuotas)
	}
	q := &structs.QuotaSet{Scope: e.Scope, ID: e.ID, Limits: map[string]int64{}, CreateIndex: index}
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
	if err := txn.Insert(TableQuotas, q); err != nil {
		return fmt.Errorf("store quotas of %s: %w", e.ID, err)
	}
	return commitAt(txn, index, TableQuotas)
}

// CheckQuotaUsage refuses limits of a project below what it uses now,
// as the update entry would (checkNotBelowUsage).
func (s *StateStore) CheckQuotaUsage(projectID string, set map[string]int64) error {
	return checkNotBelowUsage(s.ReadTxn(), projectID, set)
}

// checkNotBelowUsage is Nova's refusal of a project's limit below what
// the project already uses (-1, unlimited, always passes; key pairs are
// counted per user, so a project's limit cannot be checked against
// them). The usage is read in the writing transaction.
func checkNotBelowUsage(txn *memdb.Txn, projectID string, set map[string]int64) error {
	used, err := projectUsage(txn, nil, projectID)
	if err != nil {
		return err
	}
	groups, err := list[*structs.ServerGroup](txn, nil, TableServerGroups, "project", projectID)
	if err != nil {
		return err
	}
	used[structs.QuotaServerGroups] = int64(len(groups))
	for _, k := range structs.QuotaResources() {
		v, ok := set[k]
		if !ok || v < 0 || k == structs.QuotaKeyPairs {
			continue
		}
		if v < used[k] {
			return structs.Errorf(structs.KindInvalid,
				"Quota limit %d for %s must be greater than or equal to already used and reserved %d.", v, k, used[k])
		}
	}
	return nil
}

// checkLimits refuses a limit of a resource that none of the known
// tables names, and one below -1 (unlimited).
func checkLimits(set map[string]int64, known ...map[string]int64) error {
	for k, v := range set {
		if !slices.ContainsFunc(known, func(m map[string]int64) bool { _, ok := m[k]; return ok }) {
			return structs.Errorf(structs.KindInvalid, "unknown quota resource %q", k)
		}
		if v < structs.QuotaUnlimited {
			return structs.Errorf(structs.KindInvalid, "quota %s must be -1 (unlimited) or more, not %d", k, v)
		}
	}
	return nil
}

// quotaLimit is a project's limit of a resource: its own, else the
// default class's, else Nova's default. -1 is unlimited.
func quotaLimit(txn *memdb.Txn, projectID, resource string) int64 {
	return quotaLimitWatch(txn, nil, projectID, resource)
}

func quotaLimitWatch(txn *memdb.Txn, ws memdb.WatchSet, projectID, resource string) int64 {
	if projectID != "" {
		if q, err := first[*structs.QuotaSet](txn, ws, TableQuotas, "id", structs.QuotaScopeProject, projectID); err == nil && q != nil {
			if v, ok := q.Limits[resource]; ok {
				return v
			}
		}
	}
	return classLimit(txn, ws, structs.QuotaDefaultClass, resource)
}

func classLimit(txn *memdb.Txn, ws memdb.WatchSet, class, resource string) int64 {
	if q, err := first[*structs.QuotaSet](txn, ws, TableQuotas, "id", structs.QuotaScopeClass, class); err == nil && q != nil {
		if v, ok := q.Limits[resource]; ok {
			return v
		}
	}
	if class != structs.QuotaDefaultClass {
		return classLimit(txn, ws, structs.QuotaDefaultClass, resource)
	}
	if v, ok := structs.DefaultQuotas[resource]; ok {
		return v
	}
	if v, ok := structs.NetworkDefaultQuotas[resource]; ok {
		return v
	}
	if v, ok := structs.VolumeDefaultQuotas[resource]; ok {
		return v
	}
	return structs.QuotaUnlimited
}

// QuotaLimits returns a project's effective limit of every resource.
func (s *StateStore) QuotaLimits(ws memdb.WatchSet, projectID string) map[string]int64 {
	txn := s.ReadTxn()
	out := make(map[string]int64, len(structs.DefaultQuotas))
	for _, r := range structs.QuotaResources() {
		out[r] = quotaLimitWatch(txn, ws, projectID, r)
	}
	return out
}

// QuotaClassLimits returns a class's effective limit of every resource.
func (s *StateStore) QuotaClassLimits(ws memdb.WatchSet, class string) map[string]int64 {
	txn := s.ReadTxn()
	out := make(map[string]int64, len(structs.DefaultQuotas))
	for _, r := range structs.QuotaResources() {
		out[r] = classLimit(txn, ws, class, r)
	}
	return out
}

// QuotaUsage counts what a project uses: instances, cores and ram (its
// counter, see projectUsage), server groups, and the user's key pairs when userID is
// set.
func (s *StateStore) QuotaUsage(ws memdb.WatchSet, projectID, userID string) (map[string]int64, error) {
	txn := s.ReadTxn()
	used, err := projectUsage(txn, ws, projectID)
	if err != nil {
		return nil, err
	}
	groups, err := list[*structs.ServerGroup](txn, ws, TableServerGroups, "project", projectID)
	if err != nil {
		return nil, err
	}
	used[structs.QuotaServerGroups] = int64(len(groups))
	if userID != "" {
		kps, err := list[*structs.KeyPair](txn, ws, TableKeyPairs, "user", userID)
		if err != nil {
			return nil, err
		}
		used[structs.QuotaKeyPairs] = int64(len(kps))
	}
	return used, nil
}

func flavorSize(f *structs.Flavor) (cores, ram int64) {
	if f == nil {
		return 0, 0
	}
	return int64(f.VCPUs), int64(f.MemoryMB)
}

// admitCreate checks an instance create against the quotas and records
// the new instances in their server groups, in the create's own
// transaction: metadata_items per instance, then the project's
// instances, cores and ram, then each group's server_group_members.
// CreateInstances calls it before inserting anything.
func admitCreate(txn *memdb.Txn, index uint64, e *structs.InstanceCreateEntry) error {
	requested := map[string]map[string]int64{}
	var projects []string
	for _, inst := range e.Instances {
		if inst == nil {
			return structs.Errorf(structs.KindInvalid, "instance create with an empty instance")
		}
		if limit := quotaLimit(txn, inst.ProjectID, structs.QuotaMetadataItems); limit >= 0 && int64(len(inst.Metadata)) > limit {
			return metadataQuotaError(limit)
		}
		if inst.ProjectID == "" {
			continue
		}
		r, ok := requested[inst.ProjectID]
		if !ok {
			r = map[string]int64{}
			requested[inst.ProjectID] = r
			projects = append(projects, inst.ProjectID)
		}
		f := inst.Flavor
		if f == nil {
			f = e.Flavor
		}
		cores, ram := flavorSize(f)
		r[structs.QuotaInstances]++
		r[structs.QuotaCores] += cores
		r[structs.QuotaRAM] += ram
	}
	for _, p := range projects {
		if err := checkProjectQuota(txn, p, requested[p]); err != nil {
			return err
		}
	}
	if err := checkUserQuotas(txn, e.Instances, e.Flavor); err != nil {
		return err
	}
	return admitGroupMembers(txn, index, e.Instances)
}

// instanceResources are the project-wide resources, in the order Nova
// names them when several are over.
var instanceResources = []string{structs.QuotaCores, structs.QuotaInstances, structs.QuotaRAM}

// checkProjectQuota checks requested amounts of instances, cores and
// ram against what the project uses and may use, with Nova's
// TooManyInstances message naming every resource over its limit.
func checkProjectQuota(txn *memdb.Txn, projectID string, requested map[string]int64) error {
	if projectID == "" {
		return nil
	}
	// Usage is read only when something requested is limited.
	var used map[string]int64
	var overs, reqs, useds, limits []string
	for _, r := range instanceResources {
		n := requested[r]
		if n <= 0 {
			continue
		}
		limit := quotaLimit(txn, projectID, r)
		if limit < 0 {
			continue
		}
		if used == nil {
			var err error
			if used, err = projectUsage(txn, nil, projectID); err != nil {
				return err
			}
		}
		if used[r]+n <= limit {
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

// checkQuotaDelta checks a resize's growth (the new flavor minus the
// old, either may be negative) against the project's cores and ram
// quota. Call it before the task records its new flavor: while a resize
// is in progress, usage already counts the larger flavor.
func checkQuotaDelta(txn *memdb.Txn, projectID string, cores, ramMB int) error {
	req := map[string]int64{}
	if cores > 0 {
		req[structs.QuotaCores] = int64(cores)
	}
	if ramMB > 0 {
		req[structs.QuotaRAM] = int64(ramMB)
	}
	if len(req) == 0 {
		return nil
	}
	return checkProjectQuota(txn, projectID, req)
}

// checkServerGroupQuota checks one more group against the project's
// server_groups quota.
func checkServerGroupQuota(txn *memdb.Txn, projectID string) error {
	limit := quotaLimit(txn, projectID, structs.QuotaServerGroups)
	if limit < 0 || projectID == "" {
		return nil
	}
	groups, err := list[*structs.ServerGroup](txn, nil, TableServerGroups, "project", projectID)
	if err != nil {
		return err
	}
	if int64(len(groups))+1 > limit {
		return structs.Errorf(structs.KindQuotaReached, "Quota exceeded, too many server groups.")
	}
	return nil
}

// checkKeyPairQuota checks a key pair about to be stored against its
// user's key_pairs quota; replacing an existing key pair adds nothing.
// Key pairs belong to users, not projects, so the limit is the one of
// the user's default project (the default class's when the user has
// none).
func checkKeyPairQuota(txn *memdb.Txn, kp *structs.KeyPair) error {
	if existing, err := txn.First(TableKeyPairs, "id", kp.UserID, kp.Name); err != nil {
		return fmt.Errorf("keypair lookup: %w", err)
	} else if existing != nil {
		return nil
	}
	project := ""
	if u, err := first[*structs.User](txn, nil, TableUsers, "id", kp.UserID); err == nil && u != nil {
		project = u.DefaultProjectID
	}
	limit := keyPairLimit(txn, project, kp.UserID)
	if limit < 0 {
		return nil
	}
	kps, err := list[*structs.KeyPair](txn, nil, TableKeyPairs, "user", kp.UserID)
	if err != nil {
		return err
	}
	if int64(len(kps))+1 > limit {
		return structs.Errorf(structs.KindQuotaReached, "Maximum number of key pairs exceeded")
	}
	return nil
}

// checkMetadataQuota checks an instance's metadata, as an update left it
// in txn, against its project's metadata_items quota.
func checkMetadataQuota(txn *memdb.Txn, instanceID string) error {
	inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", instanceID)
	if err != nil || inst == nil {
		return err
	}
	if limit := quotaLimit(txn, inst.ProjectID, structs.QuotaMetadataItems); limit >= 0 && int64(len(inst.Metadata)) > limit {
		return metadataQuotaError(limit)
	}
	return nil
}

func metadataQuotaError(limit int64) error {
	return structs.Errorf(structs.KindQuotaReached, "Maximum number of metadata items exceeds %d", limit)
}
