package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// securityGroupRuleKind serves security group rules: made in a group
// the caller owns; only their description changes.
var securityGroupRuleKind = netKind{
	create: buildRuleCreate, update: buildRuleUpdate, delete: buildRuleDelete,
	visible: ownedBy(func(r *structs.SecurityGroupRule) string { return r.ProjectID }),
	fill: func(_ *fsm.StateStore, _ memdb.WatchSet, obj any, out *structs.NetObjects) error {
		out.SecurityGroupRules = append(out.SecurityGroupRules, obj.(*structs.SecurityGroupRule))
		return nil
	},
	fields: func(obj any) (string, string, string) {
		r := obj.(*structs.SecurityGroupRule)
		return r.ID, r.ProjectID, ""
	},
}

func buildRuleCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Rule == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	r := a.Rule.Copy()
	g, err := getGroup(state, a.Caller, r.SecurityGroupID)
	if err != nil {
		return nil, "", err
	}
	if r.RemoteGroupID != "" {
		if _, err := getGroup(state, a.Caller, r.RemoteGroupID); err != nil {
			return nil, "", err
		}
	}
	if err := r.Normalize(); err != nil {
		return nil, "", err
	}
	r.ID, r.ProjectID = uuid.NewString(), g.ProjectID
	return []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: r}}, r.ID, nil
}

func buildRuleUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := state.SecurityGroupRuleByID(nil, a.ID)
	if err != nil {
		return nil, "", err
	}
	if old == nil || !owns(a.Caller, old.ProjectID) {
		return nil, "", structs.NetNotFound(structs.NetKindSecurityGroupRule, a.ID)
	}
	r := old.Copy()
	for _, f := range a.Fields {
		if f != "description" {
			return nil, "", readOnly(f)
		}
		if a.Rule != nil {
			r.Description = a.Rule.Description
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindSecurityGroupRule, Expect: old.ModifyIndex, Rule: r}}, r.ID, nil
}

func buildRuleDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := state.SecurityGroupRuleByID(nil, a.ID)
	if err != nil {
		return nil, "", err
	}
	if old == nil || !owns(a.Caller, old.ProjectID) {
		return nil, "", structs.NetNotFound(structs.NetKindSecurityGroupRule, a.ID)
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindSecurityGroupRule, ID: old.ID}}, old.ID, nil
}
