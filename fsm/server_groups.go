package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableServerGroups is the name of the table, for Index and blocking
// queries.
const TableServerGroups = "server_groups"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableServerGroups,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ServerGroupSnapshot,
		table:      TableServerGroups,
		newRecord:  func() any { return new(structs.ServerGroup) },
	})
	registerApply(structs.ServerGroupCreateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ServerGroupCreateEntry
		if err := decodeBody(structs.ServerGroupCreateType, body, &e); err != nil {
			return err
		}
		return s.CreateServerGroup(index, &e)
	})
	registerApply(structs.ServerGroupDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ServerGroupDeleteEntry
		if err := decodeBody(structs.ServerGroupDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteServerGroups(index, e.GroupIDs)
	})
}

// CreateServerGroup stores a new group, within the project's
// server_groups quota.
func (s *StateStore) CreateServerGroup(index uint64, e *structs.ServerGroupCreateEntry) error {
	if e.Group == nil || e.Group.ID == "" {
		return structs.Errorf(structs.KindInvalid, "server group create without a group id")
	}
	if err := e.Group.Validate(); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	if raw, err := txn.First(TableServerGroups, "id", e.Group.ID); err != nil {
		return fmt.Errorf("server group lookup %s: %w", e.Group.ID, err)
	} else if raw != nil {
		return structs.Errorf(structs.KindConflict, "server group %s already exists", e.Group.ID)
	}
	if err := checkServerGroupQuota(txn, e.Group.ProjectID); err != nil {
		return err
	}
	g := e.Group.Copy()
	g.Members = nil
	g.CreateIndex, g.ModifyIndex = index, index
	if err := txn.Insert(TableServerGroups, g); err != nil {
		return fmt.Errorf("insert server group %s: %w", g.ID, err)
	}
	return commitAt(txn, index, TableServerGroups)
}

// DeleteServerGroups removes groups; their members keep running.
func (s *StateStore) DeleteServerGroups(index uint64, ids []string) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, id := range ids {
		existing, err := txn.First(TableServerGroups, "id", id)
		if err != nil {
			return fmt.Errorf("server group lookup %s: %w", id, err)
		}
		if existing == nil {
			return structs.Errorf(structs.KindNotFound, "Instance group %s could not be found.", id)
		}
		if err := txn.Delete(TableServerGroups, existing); err != nil {
			return fmt.Errorf("delete server group %s: %w", id, err)
		}
	}
	return commitAt(txn, index, TableServerGroups)
}

// ServerGroupByID returns a group with only its members that still
// exist, or nil. A member's deletion wakes a blocking query that read it.
func (s *StateStore) ServerGroupByID(ws memdb.WatchSet, id string) (*structs.ServerGroup, error) {
	txn := s.ReadTxn()
	g, err := first[*structs.ServerGroup](txn, ws, TableServerGroups, "id", id)
	if err != nil || g == nil {
		return nil, err
	}
	return liveGroup(txn, ws, g)
}

// ServerGroups lists the groups of a project, or every group when
// projectID is empty, by creation, each with its live members.
func (s *StateStore) ServerGroups(ws memdb.WatchSet, projectID string) ([]*structs.ServerGroup, error) {
	txn := s.ReadTxn()
	var groups []*structs.ServerGroup
	var err error
	if projectID == "" {
		groups, err = list[*structs.ServerGroup](txn, ws, TableServerGroups)
	} else {
		groups, err = list[*structs.ServerGroup](txn, ws, TableServerGroups, "project", projectID)
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].CreateIndex < groups[j].CreateIndex })
	out := make([]*structs.ServerGroup, 0, len(groups))
	for _, g := range groups {
		lg, err := liveGroup(txn, ws, g)
		if err != nil {
			return nil, err
		}
		out = append(out, lg)
	}
	return out, nil
}

// GroupMembers returns the instances of a group that still exist.
func (s *StateStore) GroupMembers(ws memdb.WatchSet, g *structs.ServerGroup) ([]*structs.Instance, error) {
	return groupMembers(s.ReadTxn(), ws, g)
}

func groupMembers(txn *memdb.Txn, ws memdb.WatchSet, g *structs.ServerGroup) ([]*structs.Instance, error) {
	out := make([]*structs.Instance, 0, len(g.Members))
	for _, id := range g.Members {
		inst, err := first[*structs.Instance](txn, ws, TableInstances, "id", id)
		if err != nil {
			return nil, err
		}
		if inst != nil {
			out = append(out, inst)
		}
	}
	return out, nil
}

// liveGroup returns g, or a copy of it without the members that are
// gone; the stored group is never modified.
func liveGroup(txn *memdb.Txn, ws memdb.WatchSet, g *structs.ServerGroup) (*structs.ServerGroup, error) {
	members, err := groupMembers(txn, ws, g)
	if err != nil {
		return nil, err
	}
	if len(members) == len(g.Members) {
		return g, nil
	}
	c := g.Copy()
	c.Members = c.Members[:0]
	for _, m := range members {
		c.Members = append(c.Members, m.ID)
	}
	return c, nil
}

// admitGroupMembers records the new instances of a create as members of
// their server groups, within each group's server_group_members quota
// (counted per user, as Nova does). The group must exist.
func admitGroupMembers(txn *memdb.Txn, index uint64, insts []*structs.Instance) error {
	byGroup := map[string][]*structs.Instance{}
	var order []string
	for _, inst := range insts {
		if inst.ServerGroupID == "" {
			continue
		}
		if _, ok := byGroup[inst.ServerGroupID]; !ok {
			order = append(order, inst.ServerGroupID)
		}
		byGroup[inst.ServerGroupID] = append(byGroup[inst.ServerGroupID], inst)
	}
	for _, gid := range order {
		g, err := first[*structs.ServerGroup](txn, nil, TableServerGroups, "id", gid)
		if err != nil {
			return err
		}
		if g == nil {
			return structs.Errorf(structs.KindInvalid, "Instance group %s could not be found.", gid)
		}
		members, err := groupMembers(txn, nil, g)
		if err != nil {
			return err
		}
		newOnes := byGroup[gid]
		used := map[string]int64{}
		for _, m := range members {
			used[m.UserID]++
		}
		requested := map[string]int64{}
		for _, inst := range newOnes {
			requested[inst.UserID]++
		}
		limit := quotaLimit(txn, g.ProjectID, structs.QuotaServerGroupMembers)
		for user, n := range requested {
			if limit >= 0 && used[user]+n > limit {
				return structs.Errorf(structs.KindQuotaReached, "Quota exceeded, too many servers in group")
			}
		}
		c := g.Copy()
		c.Members = c.Members[:0]
		for _, m := range members {
			c.Members = append(c.Members, m.ID)
		}
		for _, inst := range newOnes {
			if !c.HasMember(inst.ID) {
				c.Members = append(c.Members, inst.ID)
			}
		}
		c.ModifyIndex = index
		if err := txn.Insert(TableServerGroups, c); err != nil {
			return fmt.Errorf("update server group %s: %w", gid, err)
		}
	}
	if len(order) > 0 {
		return setIndex(txn, TableServerGroups, index)
	}
	return nil
}
