package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Tables of security groups and their rules.
const (
	TableSecurityGroups     = "security_groups"
	TableSecurityGroupRules = "security_group_rules"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableSecurityGroups,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableSecurityGroupRules,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"group":   {Name: "group", Indexer: &memdb.StringFieldIndex{Field: "SecurityGroupID"}},
				"remote":  {Name: "remote", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "RemoteGroupID"}},
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.SecurityGroupSnapshot,
		table:      TableSecurityGroups,
		newRecord:  func() any { return new(structs.SecurityGroup) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.SecurityGroupRuleSnapshot,
		table:      TableSecurityGroupRules,
		newRecord:  func() any { return new(structs.SecurityGroupRule) },
	})
}

// securityGroup applies a change of a security group.
func (t *netTxn) securityGroup(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		return t.deleteSecurityGroup(c.ID)
	}
	if c.SecurityGroup == nil || c.SecurityGroup.ID == "" {
		return structs.Errorf(structs.KindInvalid, "security group change without a group")
	}
	g := c.SecurityGroup.Copy()
	if len(g.Name) > 255 {
		return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput, "Invalid input for operation: name exceeds 255 characters.")
	}
	old, err := first[*structs.SecurityGroup](t.txn, nil, TableSecurityGroups, "id", g.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindSecurityGroup, g.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
		g.ProjectID = old.ProjectID
	} else {
		t.countCreate(g.ProjectID, structs.QuotaSecurityGroup)
	}
	g.CreateIndex, g.CreatedAt, g.Revision = t.stamps(oc, ot, orev)
	g.ModifyIndex, g.UpdatedAt = t.index, t.at
	return t.insert(TableSecurityGroups, g)
}

// deleteSecurityGroup deletes a group no port uses, with its rules and
// the rules of other groups that name it as their remote group.
func (t *netTxn) deleteSecurityGroup(id string) error {
	g, err := first[*structs.SecurityGroup](t.txn, nil, TableSecurityGroups, "id", id)
	if err != nil {
		return err
	}
	if g == nil {
		return structs.NetNotFound(structs.NetKindSecurityGroup, id)
	}
	ports, err := list[*structs.Port](t.txn, nil, TablePorts, "project", g.ProjectID)
	if err != nil {
		return err
	}
	for _, p := range ports {
		for _, sg := range p.SecurityGroups {
			if sg == id {
				return structs.NetErrorf(structs.KindConflict, structs.ErrSecurityGroupInUse, "Security Group %s in use.", id)
			}
		}
	}
	for _, index := range []string{"group", "remote"} {
		rules, err := list[*structs.SecurityGroupRule](t.txn, nil, TableSecurityGroupRules, index, id)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if err := t.remove(TableSecurityGroupRules, r); err != nil {
				return err
			}
		}
	}
	return t.remove(TableSecurityGroups, g)
}

// rule applies a change of a security group rule.
func (t *netTxn) rule(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		r, err := first[*structs.SecurityGroupRule](t.txn, nil, TableSecurityGroupRules, "id", c.ID)
		if err != nil {
			return err
		}
		if r == nil {
			return structs.NetNotFound(structs.NetKindSecurityGroupRule, c.ID)
		}
		return t.remove(TableSecurityGroupRules, r)
	}
	if c.Rule == nil || c.Rule.ID == "" {
		return structs.Errorf(structs.KindInvalid, "security group rule change without a rule")
	}
	r := c.Rule.Copy()
	if err := r.Normalize(); err != nil {
		return err
	}
	old, err := first[*structs.SecurityGroupRule](t.txn, nil, TableSecurityGroupRules, "id", r.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindSecurityGroupRule, r.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	g, err := first[*structs.SecurityGroup](t.txn, nil, TableSecurityGroups, "id", r.SecurityGroupID)
	if err != nil {
		return err
	}
	if g == nil {
		return structs.NetNotFound(structs.NetKindSecurityGroup, r.SecurityGroupID)
	}
	if r.RemoteGroupID != "" {
		if rg, err := first[*structs.SecurityGroup](t.txn, nil, TableSecurityGroups, "id", r.RemoteGroupID); err != nil {
			return err
		} else if rg == nil {
			return structs.NetNotFound(structs.NetKindSecurityGroup, r.RemoteGroupID)
		}
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		// Only the description of a rule changes.
		d := r.Description
		r = old.Copy()
		r.Description = d
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
	} else {
		siblings, err := list[*structs.SecurityGroupRule](t.txn, nil, TableSecurityGroupRules, "group", r.SecurityGroupID)
		if err != nil {
			return err
		}
		for _, o := range siblings {
			if o.SameRule(r) {
				return structs.NetErrorf(structs.KindConflict, structs.ErrSecurityGroupRuleExists,
					"Security group rule already exists. Rule id is %s.", o.ID)
			}
		}
		r.ProjectID = g.ProjectID
		t.countCreate(r.ProjectID, structs.QuotaSecurityGroupRule)
	}
	r.CreateIndex, r.CreatedAt, r.Revision = t.stamps(oc, ot, orev)
	r.ModifyIndex, r.UpdatedAt = t.index, t.at
	return t.insert(TableSecurityGroupRules, r)
}

// SecurityGroupByID returns a group or nil.
func (s *StateStore) SecurityGroupByID(ws memdb.WatchSet, id string) (*structs.SecurityGroup, error) {
	return netGet[*structs.SecurityGroup](s.ReadTxn(), ws, structs.NetKindSecurityGroup, id)
}

// SecurityGroups lists every group, or one project's, oldest first.
func (s *StateStore) SecurityGroups(ws memdb.WatchSet, projectID string) ([]*structs.SecurityGroup, error) {
	return netList[*structs.SecurityGroup](s.ReadTxn(), ws, structs.NetKindSecurityGroup, projectID)
}

// SecurityGroupRuleByID returns a rule or nil.
func (s *StateStore) SecurityGroupRuleByID(ws memdb.WatchSet, id string) (*structs.SecurityGroupRule, error) {
	return netGet[*structs.SecurityGroupRule](s.ReadTxn(), ws, structs.NetKindSecurityGroupRule, id)
}

// SecurityGroupRules lists every rule, or one group's, oldest first.
func (s *StateStore) SecurityGroupRules(ws memdb.WatchSet, groupID string) ([]*structs.SecurityGroupRule, error) {
	return netList[*structs.SecurityGroupRule](s.ReadTxn(), ws, structs.NetKindSecurityGroupRule, groupID)
}
