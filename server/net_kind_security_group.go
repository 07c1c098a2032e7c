package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// securityGroupKind serves security groups: a project's default group
// is made on first use and cannot be renamed, nor deleted but by
// admins; shown with their rules.
var securityGroupKind = netKind{
	create: buildGroupCreate, update: buildGroupUpdate, delete: buildGroupDelete,
	visible: ownedBy(func(g *structs.SecurityGroup) string { return g.ProjectID }),
	fill:    fillSecurityGroup,
	fields: func(obj any) (string, string, string) {
		g := obj.(*structs.SecurityGroup)
		return g.ID, g.ProjectID, ""
	},
}

func getGroup(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.SecurityGroup, error) {
	g, err := state.SecurityGroupByID(nil, id)
	if err != nil {
		return nil, err
	}
	if g == nil || !owns(c, g.ProjectID) {
		return nil, structs.NetNotFound(structs.NetKindSecurityGroup, id)
	}
	return g, nil
}

func buildGroupCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.SecurityGroup == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	g := a.SecurityGroup.Copy()
	var err error
	if g.ProjectID, err = ownerOf(a.Caller, g.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Has("stateful") {
		g.Stateful = true
	}
	var changes []*structs.NetChange
	if g.ProjectID != "" {
		if changes, _, err = defaultGroupChanges(state, g.ProjectID); err != nil {
			return nil, "", err
		}
	}
	if g.Name == structs.DefaultSecurityGroupName {
		return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "Default security group already exists.")
	}
	g.ID = uuid.NewString()
	changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroup, SecurityGroup: g})
	for _, r := range structs.NewSecurityGroupRules(g.ID, g.ProjectID, [2]string{uuid.NewString(), uuid.NewString()}) {
		changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: r})
	}
	return changes, g.ID, nil
}

func buildGroupUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getGroup(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	in := a.SecurityGroup
	if in == nil {
		in = &structs.SecurityGroup{}
	}
	g := old.Copy()
	for _, f := range a.Fields {
		switch f {
		case "name":
			if isDefaultGroup(old) && in.Name != old.Name {
				return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "Updating default security group not allowed.")
			}
			g.Name = in.Name
		case "description":
			g.Description = in.Description
		case "stateful":
			g.Stateful = in.Stateful
		default:
			return nil, "", readOnly(f)
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindSecurityGroup, Expect: old.ModifyIndex, SecurityGroup: g}}, g.ID, nil
}

func buildGroupDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getGroup(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if isDefaultGroup(old) && !a.Caller.Admin {
		return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrSecurityGroupCannotRemoveDefault,
			"Insufficient rights for removing default security group.")
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindSecurityGroup, ID: old.ID}}, old.ID, nil
}

// fillSecurityGroup adds a group and its rules.
func fillSecurityGroup(state *fsm.StateStore, ws memdb.WatchSet, obj any, out *structs.NetObjects) error {
	g := obj.(*structs.SecurityGroup)
	out.SecurityGroups = append(out.SecurityGroups, g)
	rules, err := state.SecurityGroupRules(ws, g.ID)
	if err != nil {
		return err
	}
	out.SecurityGroupRules = append(out.SecurityGroupRules, rules...)
	return nil
}
