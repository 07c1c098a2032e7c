package server

import (
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// ServerGroup is the endpoint for server groups. Who may see or change
// which group (a project's own, all for admins) is the API's policy; the
// endpoint trusts its callers as the other endpoints do.
type ServerGroup struct{ srv *Server }

// Create stores a new group; the FSM checks the project's server_groups
// quota in the same entry.
func (e *ServerGroup) Create(args *structs.ServerGroupCreateRequest, reply *structs.SingleServerGroupResponse) error {
	if done, err := e.srv.forward("ServerGroup.Create", args, args, reply); done {
		return err
	}
	if args.Group == nil {
		return structs.Errorf(structs.KindInvalid, "no server group to create")
	}
	g := args.Group.Copy()
	g.ID, g.Members, g.CreatedAt = uuid.NewString(), nil, time.Now().UnixNano()
	if err := g.Validate(); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.ServerGroupCreateType, &structs.ServerGroupCreateEntry{Group: g})
	if err != nil {
		return err
	}
	g.CreateIndex, g.ModifyIndex = index, index
	reply.Group, reply.Index = g, index
	return nil
}

// Get reads one group with its members that still exist.
func (e *ServerGroup) Get(args *structs.ServerGroupSpecificRequest, reply *structs.SingleServerGroupResponse) error {
	if done, err := e.srv.forward("ServerGroup.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		g, err := state.ServerGroupByID(ws, args.GroupID)
		reply.Group = g
		return g, groupsIndex(state), err
	})
	if err == nil && reply.Group == nil {
		return groupNotFound(args.GroupID)
	}
	return err
}

// List reads the groups of one project, or every group.
func (e *ServerGroup) List(args *structs.ServerGroupListRequest, reply *structs.ServerGroupListResponse) error {
	if done, err := e.srv.forward("ServerGroup.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		groups, err := state.ServerGroups(ws, args.ProjectID)
		reply.Groups = groups
		return groups, groupsIndex(state), err
	})
}

// Delete removes a group; its members keep running.
func (e *ServerGroup) Delete(args *structs.ServerGroupDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("ServerGroup.Delete", args, args, reply); done {
		return err
	}
	g, err := e.srv.fsm.State().ServerGroupByID(nil, args.GroupID)
	if err != nil {
		return err
	}
	if g == nil {
		return groupNotFound(args.GroupID)
	}
	index, err := e.srv.apply(structs.ServerGroupDeleteType, &structs.ServerGroupDeleteEntry{GroupIDs: []string{g.ID}})
	reply.Index = index
	return err
}

// groupsIndex is the index a group read reflects: groups change with
// their own table and their members with the instances'.
func groupsIndex(state *fsm.StateStore) uint64 {
	return max(state.Index(fsm.TableServerGroups), state.Index(fsm.TableInstances))
}

func groupNotFound(id string) error {
	return structs.Errorf(structs.KindNotFound, "Instance group %s could not be found.", id)
}
