package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// RecordAction records a finished instance action that ran outside the
// task engine (changePassword, carried out synchronously by the agent of
// the instance's host), with its one event, as Nova records it.
func (e *Instance) RecordAction(args *structs.InstanceActionRecordRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Instance.RecordAction", args, args, reply); done {
		return err
	}
	inst, err := e.srv.fsm.State().InstanceByID(nil, args.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil || (!args.Admin && args.ProjectID != "" && inst.ProjectID != args.ProjectID) {
		return structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", args.InstanceID)
	}
	if args.RequestID == "" || args.Action == "" || args.Event == "" {
		return structs.Errorf(structs.KindInvalid, "recording an instance action needs its request id, name and event")
	}
	ev := &structs.InstanceActionEvent{Event: args.Event, StartTime: args.StartTime, FinishTime: args.FinishTime,
		Result: structs.EventSuccess, HostID: args.HostID}
	a := &structs.InstanceAction{RequestID: args.RequestID, InstanceID: inst.ID, Action: args.Action,
		ProjectID: inst.ProjectID, UserID: args.UserID, StartTime: args.StartTime, UpdatedAt: args.FinishTime,
		Events: []*structs.InstanceActionEvent{ev}}
	if args.Error != "" {
		ev.Result, ev.Details, a.Message = structs.EventError, args.Error, "Error"
	}
	index, err := e.srv.apply(structs.InstanceActionRecordType, &structs.InstanceActionRecordEntry{Action: a})
	reply.Index = index
	return err
}
