package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Table names of instance groups, for Index and blocking queries.
const (
	TableInstanceGroups        = "instance_groups"
	TableInstanceGroupVersions = "instance_group_versions"
	TableGroupDeployments      = "instance_group_deployments"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name:    TableInstanceGroups,
			Indexes: map[string]*memdb.IndexSchema{"id": idIndex("Name")},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableInstanceGroupVersions,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Name"},
					&memdb.UintFieldIndex{Field: "Version"},
				}}},
				"name": {Name: "name", Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name:    TableGroupDeployments,
			Indexes: map[string]*memdb.IndexSchema{"id": idIndex("Name")},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceGroupSnapshot,
		table:      TableInstanceGroups,
		newRecord:  func() any { return new(structs.InstanceGroup) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceGroupVersionSnapshot,
		table:      TableInstanceGroupVersions,
		newRecord:  func() any { return new(structs.InstanceGroupVersion) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceGroupDeploymentSnapshot,
		table:      TableGroupDeployments,
		newRecord:  func() any { return new(structs.GroupDeployment) },
	})
	registerApply(structs.InstanceGroupRegisterType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceGroupRegisterEntry
		if err := decodeBody(structs.InstanceGroupRegisterType, body, &e); err != nil {
			return err
		}
		return s.RegisterInstanceGroup(index, &e)
	})
	registerApply(structs.InstanceGroupStopType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceGroupStopEntry
		if err := decodeBody(structs.InstanceGroupStopType, body, &e); err != nil {
			return err
		}
		return s.StopInstanceGroup(index, &e)
	})
	registerApply(structs.InstanceGroupDeploymentType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceGroupDeploymentEntry
		if err := decodeBody(structs.InstanceGroupDeploymentType, body, &e); err != nil {
			return err
		}
		return s.UpsertGroupDeployment(index, &e)
	})
	registerApply(structs.InstanceGroupDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceGroupDeleteEntry
		if err := decodeBody(structs.InstanceGroupDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteInstanceGroup(index, &e)
	})
}

// GroupNotFound is the error of a group that does not exist.
func GroupNotFound(name string) error {
	return structs.Errorf(structs.KindNotFound, "instance group %q not found", name)
}

// checkGroupIndex enforces a check index against the group's
// ModifyIndex (0 when it does not exist).
func checkGroupIndex(g *structs.InstanceGroup, name string, enforce bool, check uint64) error {
	if !enforce {
		return nil
	}
	var cur uint64
	if g != nil {
		cur = g.ModifyIndex
	}
	if cur == check {
		return nil
	}
	if g == nil {
		return structs.Errorf(structs.KindConflict, "instance group %q: check index %d given, but the group does not exist (use 0 for a new group)", name, check)
	}
	return structs.Errorf(structs.KindConflict, "instance group %q changed: its modify index is %d, not the check index %d; plan again", name, cur, check)
}

// RegisterInstanceGroup stores a new version of a group and resets its
// deployment to that version, creating its server group in the same
// transaction when the entry carries one.
func (s *StateStore) RegisterInstanceGroup(index uint64, e *structs.InstanceGroupRegisterEntry) error {
	if e.Spec == nil {
		return structs.Errorf(structs.KindInvalid, "instance group register without a spec")
	}
	spec := e.Spec.Copy()
	spec.Canonicalize()
	if err := spec.Validate(); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.InstanceGroup](txn, nil, TableInstanceGroups, "id", spec.Name)
	if err != nil {
		return err
	}
	if err := checkGroupIndex(existing, spec.Name, e.EnforceIndex, e.CheckIndex); err != nil {
		return err
	}
	tables := []string{TableInstanceGroups, TableInstanceGroupVersions, TableGroupDeployments}
	if sg := e.ServerGroup; sg != nil {
		if sg.ID == "" || sg.ID != e.ServerGroupID {
			return structs.Errorf(structs.KindInvalid, "instance group %q: the server group to create must be its ServerGroupID", spec.Name)
		}
		if err := sg.Validate(); err != nil {
			return err
		}
		if raw, err := txn.First(TableServerGroups, "id", sg.ID); err != nil {
			return fmt.Errorf("server group lookup %s: %w", sg.ID, err)
		} else if raw != nil {
			return structs.Errorf(structs.KindConflict, "server group %s already exists", sg.ID)
		}
		c := sg.Copy()
		c.Members = nil
		c.CreateIndex, c.ModifyIndex = index, index
		if err := txn.Insert(TableServerGroups, c); err != nil {
			return fmt.Errorf("insert server group %s: %w", c.ID, err)
		}
		tables = append(tables, TableServerGroups)
	} else if e.ServerGroupID != "" {
		if raw, err := txn.First(TableServerGroups, "id", e.ServerGroupID); err != nil {
			return fmt.Errorf("server group lookup %s: %w", e.ServerGroupID, err)
		} else if raw == nil {
			return structs.Errorf(structs.KindInvalid, "Instance group %s could not be found.", e.ServerGroupID)
		}
	}
	g := &structs.InstanceGroup{Name: spec.Name, Spec: spec, Version: 1, ServerGroupID: e.ServerGroupID,
		SubmitTime: e.SubmitTime, CreateIndex: index, ModifyIndex: index}
	if existing != nil {
		g.Version, g.CreateIndex = existing.Version+1, existing.CreateIndex
	}
	v := &structs.InstanceGroupVersion{Name: g.Name, Version: g.Version, Spec: spec.Copy(), ServerGroupID: g.ServerGroupID,
		RevertedFrom: e.RevertedFrom, SubmitTime: e.SubmitTime, CreateIndex: index}
	d := &structs.GroupDeployment{Name: g.Name, Version: g.Version, Status: structs.DeploymentRunning,
		Description: "deployment started", Desired: spec.Count, StartedAt: e.SubmitTime, UpdatedAt: e.SubmitTime}
	if err := storeGroupVersion(txn, index, g, v, d); err != nil {
		return err
	}
	return commitAt(txn, index, tables...)
}

// StopInstanceGroup stores a stopped version of a group: the same spec,
// every member to be deleted (and the group too with Purge).
func (s *StateStore) StopInstanceGroup(index uint64, e *structs.InstanceGroupStopEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.InstanceGroup](txn, nil, TableInstanceGroups, "id", e.Name)
	if err != nil {
		return err
	}
	if existing == nil {
		return GroupNotFound(e.Name)
	}
	if err := checkGroupIndex(existing, e.Name, e.EnforceIndex, e.CheckIndex); err != nil {
		return err
	}
	g := existing.Copy()
	g.Version++
	g.Stopped, g.Purge = true, e.Purge || existing.Purge
	g.SubmitTime, g.ModifyIndex = e.SubmitTime, index
	v := &structs.InstanceGroupVersion{Name: g.Name, Version: g.Version, Spec: g.Spec.Copy(), ServerGroupID: g.ServerGroupID,
		Stopped: true, Purge: g.Purge, SubmitTime: e.SubmitTime, CreateIndex: index}
	d := &structs.GroupDeployment{Name: g.Name, Version: g.Version, Status: structs.DeploymentStopping,
		Description: "deleting every member", StartedAt: e.SubmitTime, UpdatedAt: e.SubmitTime}
	if err := storeGroupVersion(txn, index, g, v, d); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstanceGroups, TableInstanceGroupVersions, TableGroupDeployments)
}

// storeGroupVersion writes a group, its new version (pruning the oldest
// beyond MaxGroupVersions) and its fresh deployment.
func storeGroupVersion(txn *memdb.Txn, index uint64, g *structs.InstanceGroup, v *structs.InstanceGroupVersion, d *structs.GroupDeployment) error {
	if err := txn.Insert(TableInstanceGroups, g); err != nil {
		return fmt.Errorf("insert instance group %s: %w", g.Name, err)
	}
	if err := txn.Insert(TableInstanceGroupVersions, v); err != nil {
		return fmt.Errorf("insert instance group %s version %d: %w", g.Name, v.Version, err)
	}
	versions, err := list[*structs.InstanceGroupVersion](txn, nil, TableInstanceGroupVersions, "name", g.Name)
	if err != nil {
		return err
	}
	if extra := len(versions) - structs.MaxGroupVersions; extra > 0 {
		sort.Slice(versions, func(i, j int) bool { return versions[i].Version < versions[j].Version })
		for _, old := range versions[:extra] {
			if err := txn.Delete(TableInstanceGroupVersions, old); err != nil {
				return fmt.Errorf("prune instance group %s version %d: %w", g.Name, old.Version, err)
			}
		}
	}
	d.CreateIndex, d.ModifyIndex = index, index
	if old, err := first[*structs.GroupDeployment](txn, nil, TableGroupDeployments, "id", g.Name); err != nil {
		return err
	} else if old != nil {
		d.CreateIndex = old.CreateIndex
	}
	if err := txn.Insert(TableGroupDeployments, d); err != nil {
		return fmt.Errorf("insert deployment of %s: %w", g.Name, err)
	}
	return nil
}

// UpsertGroupDeployment records the progress of a group's deployment;
// progress of a version that is no longer the latest is refused.
func (s *StateStore) UpsertGroupDeployment(index uint64, e *structs.InstanceGroupDeploymentEntry) error {
	if e.Deployment == nil {
		return structs.Errorf(structs.KindInvalid, "deployment update without a deployment")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	g, err := first[*structs.InstanceGroup](txn, nil, TableInstanceGroups, "id", e.Deployment.Name)
	if err != nil {
		return err
	}
	if g == nil {
		return GroupNotFound(e.Deployment.Name)
	}
	if g.Version != e.Deployment.Version {
		return structs.Errorf(structs.KindConflict, "instance group %q is at version %d, not %d", g.Name, g.Version, e.Deployment.Version)
	}
	d := e.Deployment.Copy()
	d.CreateIndex, d.ModifyIndex = index, index
	if old, err := first[*structs.GroupDeployment](txn, nil, TableGroupDeployments, "id", g.Name); err != nil {
		return err
	} else if old != nil {
		d.CreateIndex = old.CreateIndex
		if d.StartedAt == 0 {
			d.StartedAt = old.StartedAt
		}
	}
	if err := txn.Insert(TableGroupDeployments, d); err != nil {
		return fmt.Errorf("insert deployment of %s: %w", g.Name, err)
	}
	return commitAt(txn, index, TableGroupDeployments)
}

// DeleteInstanceGroup removes a purged group with its versions, its
// deployment and the server groups made for it (those that still
// exist). A group no longer being purged (registered again meanwhile)
// is refused.
func (s *StateStore) DeleteInstanceGroup(index uint64, e *structs.InstanceGroupDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	g, err := first[*structs.InstanceGroup](txn, nil, TableInstanceGroups, "id", e.Name)
	if err != nil {
		return err
	}
	if g == nil {
		return GroupNotFound(e.Name)
	}
	if !g.Purge {
		return structs.Errorf(structs.KindConflict, "instance group %q is not being purged", e.Name)
	}
	if err := txn.Delete(TableInstanceGroups, g); err != nil {
		return fmt.Errorf("delete instance group %s: %w", g.Name, err)
	}
	if _, err := txn.DeleteAll(TableInstanceGroupVersions, "name", g.Name); err != nil {
		return fmt.Errorf("delete versions of %s: %w", g.Name, err)
	}
	if _, err := txn.DeleteAll(TableGroupDeployments, "id", g.Name); err != nil {
		return fmt.Errorf("delete deployment of %s: %w", g.Name, err)
	}
	tables := []string{TableInstanceGroups, TableInstanceGroupVersions, TableGroupDeployments}
	for _, id := range e.ServerGroupIDs {
		raw, err := txn.First(TableServerGroups, "id", id)
		if err != nil {
			return fmt.Errorf("server group lookup %s: %w", id, err)
		}
		if raw == nil {
			continue
		}
		if err := txn.Delete(TableServerGroups, raw); err != nil {
			return fmt.Errorf("delete server group %s: %w", id, err)
		}
		if len(tables) == 3 {
			tables = append(tables, TableServerGroups)
		}
	}
	return commitAt(txn, index, tables...)
}

// InstanceGroupByName returns a group or nil.
func (s *StateStore) InstanceGroupByName(ws memdb.WatchSet, name string) (*structs.InstanceGroup, error) {
	return first[*structs.InstanceGroup](s.ReadTxn(), ws, TableInstanceGroups, "id", name)
}

// InstanceGroups lists every group by name.
func (s *StateStore) InstanceGroups(ws memdb.WatchSet) ([]*structs.InstanceGroup, error) {
	return list[*structs.InstanceGroup](s.ReadTxn(), ws, TableInstanceGroups)
}

// InstanceGroupVersions lists a group's versions, newest first.
func (s *StateStore) InstanceGroupVersions(ws memdb.WatchSet, name string) ([]*structs.InstanceGroupVersion, error) {
	out, err := list[*structs.InstanceGroupVersion](s.ReadTxn(), ws, TableInstanceGroupVersions, "name", name)
	sort.Slice(out, func(i, j int) bool { return out[i].Version > out[j].Version })
	return out, err
}

// InstanceGroupVersion returns one version of a group, or nil.
func (s *StateStore) InstanceGroupVersion(ws memdb.WatchSet, name string, version uint64) (*structs.InstanceGroupVersion, error) {
	return first[*structs.InstanceGroupVersion](s.ReadTxn(), ws, TableInstanceGroupVersions, "id", name, version)
}

// GroupDeployment returns a group's deployment, or nil.
func (s *StateStore) GroupDeployment(ws memdb.WatchSet, name string) (*structs.GroupDeployment, error) {
	return first[*structs.GroupDeployment](s.ReadTxn(), ws, TableGroupDeployments, "id", name)
}

// InstancesByGroup lists the members of an instance group, by id.
func (s *StateStore) InstancesByGroup(ws memdb.WatchSet, name string) ([]*structs.Instance, error) {
	return list[*structs.Instance](s.ReadTxn(), ws, TableInstances, "group", name)
}
