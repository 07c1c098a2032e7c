package server

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// identityState is the state the identity lookups read.
type identityState = *fsm.StateStore

// List reads identity objects of one kind (see IdentityListRequest for
// the filters), as a blocking query. Users never carry their hash.
func (e *Identity) List(args *structs.IdentityListRequest, reply *structs.IdentityListResponse) error {
	if done, err := e.srv.forward("Identity.List", args, args, reply); done {
		return err
	}
	var query func(ws memdb.WatchSet, state identityState) (uint64, error)
	switch args.Kind {
	case structs.IdentityKindProjects:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			var err error
			reply.Projects, err = listProjects(ws, state, args)
			return maxIndex(state, fsm.TableProjects, fsm.TableAssignments), err
		}
	case structs.IdentityKindUsers:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			users, err := state.Users(ws)
			reply.Users = nil
			for _, u := range users {
				if (args.ID == "" || u.ID == args.ID) && (args.Name == "" || u.Name == args.Name) {
					reply.Users = append(reply.Users, u.Sanitized())
				}
			}
			return state.Index(fsm.TableUsers), err
		}
	case structs.IdentityKindRoles:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			var err error
			reply.Roles, err = listRoles(ws, state, args)
			return maxIndex(state, fsm.TableRoles, fsm.TableAssignments), err
		}
	case structs.IdentityKindAssignments:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			var err error
			reply.Assignments, err = state.Assignments(ws, args.UserID, args.ProjectID, args.RoleID)
			return state.Index(fsm.TableAssignments), err
		}
	case structs.IdentityKindSigningKeys:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			keys, err := state.SigningKeys(ws)
			reply.SigningKeys = publicSigningKeys(keys)
			return state.Index(fsm.TableSigningKeys), err
		}
	case structs.IdentityKindRevoked:
		query = func(ws memdb.WatchSet, state identityState) (uint64, error) {
			var err error
			reply.Revoked, err = state.RevokedTokens(ws)
			return state.Index(fsm.TableRevokedTokens), err
		}
	default:
		return structs.Errorf(structs.KindInvalid, "identity list kind %q is not one of projects, users, roles, assignments, signing_keys, revoked", args.Kind)
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		index, err := query(ws, state)
		return reply, index, err
	})
}

func listProjects(ws memdb.WatchSet, state identityState, args *structs.IdentityListRequest) ([]*structs.Project, error) {
	all, err := state.Projects(ws)
	if err != nil {
		return nil, err
	}
	var member map[string]bool
	if args.UserID != "" {
		as, err := state.Assignments(ws, args.UserID, "", "")
		if err != nil {
			return nil, err
		}
		member = map[string]bool{}
		for _, a := range as {
			member[a.ProjectID] = true
		}
	}
	var out []*structs.Project
	for _, p := range all {
		if (args.ID == "" || p.ID == args.ID) && (args.Name == "" || p.Name == args.Name) && (member == nil || member[p.ID]) {
			out = append(out, p)
		}
	}
	return out, nil
}

func listRoles(ws memdb.WatchSet, state identityState, args *structs.IdentityListRequest) ([]*structs.Role, error) {
	all, err := state.Roles(ws)
	if err != nil {
		return nil, err
	}
	var granted map[string]bool
	if args.UserID != "" || args.ProjectID != "" {
		as, err := state.Assignments(ws, args.UserID, args.ProjectID, "")
		if err != nil {
			return nil, err
		}
		granted = map[string]bool{}
		for _, a := range as {
			granted[a.RoleID] = true
		}
	}
	var out []*structs.Role
	for _, r := range all {
		if (args.ID == "" || r.ID == args.ID) && (args.Name == "" || r.Name == args.Name) && (granted == nil || granted[r.ID]) {
			out = append(out, r)
		}
	}
	return out, nil
}

// maxIndex is the largest index of the tables an answer depends on.
func maxIndex(state identityState, tables ...string) uint64 {
	var max uint64
	for _, t := range tables {
		if i := state.Index(t); i > max {
			max = i
		}
	}
	return max
}

// resolveDomain maps a domain id or name to the id of the one domain
// served; ok is false for any other domain.
func resolveDomain(id, name string) (string, bool) {
	if id != "" {
		return id, id == structs.DefaultDomainID
	}
	if strings.EqualFold(name, structs.DefaultDomainName) {
		return structs.DefaultDomainID, true
	}
	return "", false
}

// lookupUser finds a user by id, or by name in a domain; nil if none.
func lookupUser(state identityState, id, name, domainID, domainName string) (*structs.User, error) {
	if id != "" {
		return state.UserByID(nil, id)
	}
	domain, ok := resolveDomain(domainID, domainName)
	if !ok {
		return nil, nil
	}
	return state.UserByName(nil, domain, name)
}

// lookupProject finds a project by id, or by name in a domain; nil if
// none.
func lookupProject(state identityState, id, name, domainID, domainName string) (*structs.Project, error) {
	if id != "" {
		return state.ProjectByID(nil, id)
	}
	domain, ok := resolveDomain(domainID, domainName)
	if !ok {
		return nil, nil
	}
	return state.ProjectByName(nil, domain, name)
}
