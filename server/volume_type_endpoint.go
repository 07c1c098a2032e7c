package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// TypeList reads the volume types, __DEFAULT__ first.
func (e *Volume) TypeList(args *structs.VolumeTypeListRequest, reply *structs.VolumeTypeListResponse) error {
	if done, err := e.srv.forward("Volume.TypeList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		ts, err := state.VolumeTypes(ws)
		reply.Types = ts
		return ts, state.Index(fsm.TableVolumeTypes), err
	})
}

// TypeGet reads one volume type by id or name.
func (e *Volume) TypeGet(args *structs.VolumeTypeSpecificRequest, reply *structs.SingleVolumeTypeResponse) error {
	if done, err := e.srv.forward("Volume.TypeGet", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		var t *structs.VolumeType
		var err error
		if args.TypeID != "" {
			t, err = state.VolumeType(ws, args.TypeID)
		}
		reply.Type = t
		return t, state.Index(fsm.TableVolumeTypes), err
	})
	if err == nil && reply.Type == nil {
		return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", args.TypeID)
	}
	return err
}

// TypeUpsert creates a volume type (an id is chosen when it has none)
// or changes one.
func (e *Volume) TypeUpsert(args *structs.VolumeTypeUpsertRequest, reply *structs.SingleVolumeTypeResponse) error {
	if done, err := e.srv.forward("Volume.TypeUpsert", args, args, reply); done {
		return err
	}
	if args.Type == nil || args.Type.Name == "" || len(args.Type.Name) > 255 {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: a volume type needs a name of 1 to 255 characters")
	}
	t := *args.Type
	if t.ID == "" {
		t.ID = uuid.NewString()
	}
	index, err := e.srv.apply(structs.VolumeTypeUpsertType, &structs.VolumeTypeUpsertEntry{Type: &t})
	if err != nil {
		return err
	}
	stored, err := e.srv.fsm.State().VolumeType(nil, t.ID)
	if err != nil {
		return err
	}
	reply.Type, reply.Index = stored, index
	return nil
}

// TypeDelete removes a volume type no volume uses.
func (e *Volume) TypeDelete(args *structs.VolumeTypeDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Volume.TypeDelete", args, args, reply); done {
		return err
	}
	t, err := e.srv.fsm.State().VolumeType(nil, args.TypeID)
	if err != nil {
		return err
	}
	if t == nil {
		return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", args.TypeID)
	}
	index, err := e.srv.apply(structs.VolumeTypeDeleteType, &structs.VolumeTypeDeleteEntry{ID: t.ID})
	reply.Index = index
	return err
}
