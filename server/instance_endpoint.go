package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// maxInstancesPerRequest bounds multi-create, as Nova's quota does by
// default.
const maxInstancesPerRequest = 1000

// Instance is the endpoint for instances.
type Instance struct{ srv *Server }

// Create validates a boot request and commits its instances and their
// evaluation in one Raft entry; the leader's broker then schedules them.
func (e *Instance) Create(args *structs.InstanceCreateRequest, reply *structs.InstanceCreateResponse) error {
	if done, err := e.srv.forward("Instance.Create", args, args, reply); done {
		return err
	}
	// A retry of a create that already committed is answered from its
	// record (instance_create_idempotent.go).
	if done, err := e.srv.createdBefore(args, reply); done {
		return err
	}
	entry, err := e.srv.buildCreate(args)
	if err != nil {
		return err
	}
	// The entry carries the flavor once for all its instances; the
	// reply still shows it on each.
	wire := *entry
	wire.Instances = make([]*structs.Instance, len(entry.Instances))
	for i, inst := range entry.Instances {
		c := *inst
		c.Flavor = nil
		wire.Instances[i] = &c
	}
	wire.Flavor = entry.Instances[0].Flavor
	// Concurrent creates share one Raft entry (instance_create_batch.go).
	index, err := e.srv.creates.submit(e.srv, &wire)
	var replay *structs.CreateReplay
	if errors.As(err, &replay) {
		// An earlier attempt with this key committed first (it was still
		// in flight when this one was built): answer with its instances.
		return e.srv.replyCreated(replay.Request, reply)
	}
	if err != nil {
		return err
	}
	// The evaluation reached the broker as it committed (eval_enqueue.go);
	// instances that wait for their volumes have none yet
	// (boot_volume_build.go).
	reply.Index = index
	if entry.Eval != nil {
		entry.Eval.CreateIndex, entry.Eval.ModifyIndex = index, index
		reply.EvalID = entry.Eval.ID
	}
	for _, inst := range entry.Instances {
		inst.CreateIndex, inst.ModifyIndex = index, index
	}
	reply.Instances = entry.Instances
	return nil
}

// buildCreate checks a create request against the state
// (validateCreate, create_validate.go) and builds its entry, choosing ids
// and timestamps before proposal.
func (s *Server) buildCreate(args *structs.InstanceCreateRequest) (*structs.InstanceCreateEntry, error) {
	state := s.fsm.State()
	v, err := s.validateCreate(state, args)
	if err != nil {
		return nil, err
	}
	count, flavor, imageID, imageProps := v.count, v.flavor, v.imageID, v.imageProps
	groupID, hints, targetHostID := v.groupID, v.hints, v.targetHostID
	now := time.Now().UnixNano()
	reservation := "r-" + uuid.NewString()[:8]
	ev := &structs.Evaluation{ID: uuid.NewString(), TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusPending, CreatedAt: now}
	requestID := args.RequestID
	if requestID == "" {
		requestID = "req-" + uuid.NewString()
	}
	entry := &structs.InstanceCreateEntry{Eval: ev, RequestID: requestID, CreatedAt: now}
	if args.IdempotencyKey != "" {
		entry.Idempotency = &structs.CreateIdempotency{Key: args.IdempotencyKey, Fingerprint: createFingerprint(args)}
	}
	for n := 1; n <= count; n++ {
		name := args.Name
		if count > 1 {
			// Nova's multi_instance_display_name_template.
			name = fmt.Sprintf("%s-%d", args.Name, n)
		}
		inst := &structs.Instance{
			ID: uuid.NewString(), Name: name, Description: args.Description, ProjectID: args.ProjectID, UserID: args.UserID,
			ReservationID: reservation, LaunchIndex: n - 1, FlavorID: flavor.ID, Flavor: flavor.Copy(),
			ImageID: imageID, ImageProperties: imageProps, KeyName: args.KeyName, AZ: args.AZ,
			VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling, PowerState: structs.PowerNoState,
			Metadata: args.Metadata, CreatedAt: now, UpdatedAt: now,
			ServerGroupID: groupID, Hints: hints.Copy(), TargetHostID: targetHostID,
			InstanceGroup: args.InstanceGroup, InstanceGroupVersion: args.InstanceGroupVersion,
			Constraints: args.Constraints, UserData: args.UserData, ConfigDrive: args.ConfigDrive,
			Hostname: args.Hostname, Tags: structs.SortedTags(args.Tags),
			AccessIPv4: args.AccessIPv4, AccessIPv6: args.AccessIPv6, AutoDiskConfig: v.autoDisk,
			BlockDevices: blockDevicesFor(args, n),
		}
		if len(inst.Tags) == 0 {
			inst.Tags = nil
		}
		entry.Instances = append(entry.Instances, inst)
		ev.InstanceIDs = append(ev.InstanceIDs, inst.ID)
	}
	if err := s.planBuildVolumes(state, entry); err != nil {
		return nil, err
	}
	if entry.Network, err = s.instanceNetworking(state, args, entry.Instances); err != nil {
		return nil, err
	}
	return entry, nil
}

// List reads instances, all or one host's.
func (e *Instance) List(args *structs.InstanceListRequest, reply *structs.InstanceListResponse) error {
	if done, err := e.srv.forward("Instance.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		var insts []*structs.Instance
		var err error
		if args.HostID != "" {
			insts, err = state.InstancesByHost(ws, args.HostID)
		} else {
			insts, err = state.Instances(ws)
		}
		if args.ProjectID != "" && err == nil {
			mine := insts[:0:0]
			for _, i := range insts {
				if i.ProjectID == args.ProjectID {
					mine = append(mine, i)
				}
			}
			insts = mine
		}
		reply.Instances = insts
		return insts, state.Index(fsm.TableInstances), err
	})
}

// Get reads one instance with its live allocation.
func (e *Instance) Get(args *structs.InstanceSpecificRequest, reply *structs.SingleInstanceResponse) error {
	if done, err := e.srv.forward("Instance.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		inst, err := state.InstanceByID(ws, args.InstanceID)
		if err != nil {
			return nil, 0, err
		}
		reply.Instance, reply.Allocation = inst, nil
		if inst != nil {
			allocs, err := state.AllocationsByInstance(ws, inst.ID)
			if err != nil {
				return nil, 0, err
			}
			for _, a := range allocs {
				reply.Allocation = a
			}
		}
		return inst, max(state.Index(fsm.TableInstances), state.Index(fsm.TableAllocations)), nil
	})
	if err == nil && reply.Instance == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", args.InstanceID)
	}
	return err
}

// Delete deletes instances: one running on an up host is destroyed by its
// agent first; one never placed, failed, or on a down host is removed at
// once (its agent destroys the leftover when it returns). With
// ReclaimInstanceInterval set, a delete is soft (restorable) unless
// forced.
func (e *Instance) Delete(args *structs.InstanceDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Instance.Delete", args, args, reply); done {
		return err
	}
	if len(args.InstanceIDs) == 0 {
		return structs.Errorf(structs.KindInvalid, "no instances to delete")
	}
	requestID := args.RequestID
	if requestID == "" {
		requestID = "req-" + uuid.NewString()
	}
	state := e.srv.fsm.State()
	entry := &structs.InstanceDeleteEntry{UpdatedAt: time.Now().UnixNano(), RequestID: requestID, UserID: args.UserID}
	for _, id := range args.InstanceIDs {
		inst, err := state.InstanceByID(nil, id)
		if err != nil {
			return err
		}
		if inst == nil || (!args.Admin && args.ProjectID != "" && inst.ProjectID != args.ProjectID) {
			return structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", id)
		}
		if inst.Locked && !args.Admin {
			return structs.Errorf(structs.KindConflict, "Instance %s is locked", inst.ID)
		}
		// As in Nova, an instance that never finished building is deleted
		// outright: there is nothing to restore.
		if e.srv.config.ReclaimInstanceInterval > 0 && !args.Force && inst.VMState != structs.VMStateSoftDeleted &&
			inst.VMState != structs.VMStateBuilding {
			if len(args.InstanceIDs) != 1 {
				return structs.Errorf(structs.KindInvalid, "soft delete takes one instance at a time")
			}
			var out structs.InstanceTaskResponse
			err := e.Task(&structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpSoftDelete, ProjectID: args.ProjectID,
				UserID: args.UserID, Admin: args.Admin, RequestID: requestID}, &out)
			reply.Index = out.Index
			return err
		}
		live, err := liveAllocOnUpHost(state, inst)
		if err != nil {
			return err
		}
		if live {
			entry.Deleting = append(entry.Deleting, id)
		} else {
			entry.Purge = append(entry.Purge, id)
		}
	}
	index, err := e.srv.apply(structs.InstanceDeleteType, entry)
	reply.Index = index
	return err
}

func liveAllocOnUpHost(state *fsm.StateStore, inst *structs.Instance) (bool, error) {
	allocs, err := state.AllocationsByInstance(nil, inst.ID)
	if err != nil {
		return false, err
	}
	for _, a := range allocs {
		if a.Terminal() {
			continue
		}
		host, err := state.HostByID(nil, a.HostID)
		if err != nil {
			return false, err
		}
		if host != nil && host.Up() {
			return true, nil
		}
	}
	return false, nil
}

// Action asks an instance's agent for start, stop or reboot: the power
// operations of Instance.Task under their native API names.
func (e *Instance) Action(args *structs.InstanceActionRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Instance.Action", args, args, reply); done {
		return err
	}
	switch args.Action {
	case structs.OpStart, structs.OpStop, structs.OpRebootSoft, structs.OpRebootHard:
	default:
		return structs.Errorf(structs.KindInvalid, "unknown action %q (start, stop, reboot_soft, reboot_hard)", args.Action)
	}
	var out structs.InstanceTaskResponse
	err := e.Task(&structs.InstanceTaskRequest{InstanceID: args.InstanceID, Op: args.Action,
		ProjectID: args.ProjectID, UserID: args.UserID, Admin: args.Admin}, &out)
	reply.Index = out.Index
	return err
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
