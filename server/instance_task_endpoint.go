package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// adminOps are operations only admins may ask for (Nova's default
// policy: moving instances between hosts, and swapping the volume under
// a guest, are an operator's job).
var adminOps = map[string]bool{
	structs.OpMigrate: true, structs.OpLiveMigrate: true, structs.OpEvacuate: true,
	structs.OpResetState: true, structs.OpSwapVolume: true,
}

// moveTriggers names the evaluation of each operation that schedules.
var moveTriggers = map[string]string{
	structs.OpResize: structs.EvalTriggerResize, structs.OpMigrate: structs.EvalTriggerMigrate,
	structs.OpLiveMigrate: structs.EvalTriggerMigrate, structs.OpEvacuate: structs.EvalTriggerEvacuate,
	structs.OpUnshelve: structs.EvalTriggerUnshelve,
}

// Task starts an operation on an instance: it checks the caller may,
// resolves what the operation needs (flavor, target host), and commits
// the operation's first step in one entry; the FSM takes it from there.
func (e *Instance) Task(args *structs.InstanceTaskRequest, reply *structs.InstanceTaskResponse) error {
	// The request ID is fixed before forwarding so that a retry of this
	// call, by forwarding or by the caller, is recognised by the FSM.
	if args.RequestID == "" {
		args.RequestID = "req-" + uuid.NewString()
	}
	if done, err := e.srv.forward("Instance.Task", args, args, reply); done {
		return err
	}
	// A submission with an idempotency key that was started before is
	// answered as it was (instance_task_idempotent.go).
	if done, err := e.srv.taskedBefore(args, reply); done {
		return err
	}
	entry, err := e.srv.buildTask(args)
	if err != nil {
		return err
	}
	entry.Idempotency = taskIdempotency(args)
	undo, err := e.srv.prepareShelve(args, entry) // shelve_image.go
	if err != nil {
		return err
	}
	leftover := e.srv.shelvedImageOf(args)
	if err := e.srv.applyTask(entry, reply); err != nil {
		if undo != nil {
			undo()
		}
		return err
	}
	if leftover != "" {
		e.srv.deleteShelvedImage(leftover)
	}
	return nil
}

// applyTask commits a task entry and answers for it.
func (s *Server) applyTask(entry *structs.InstanceTaskEntry, reply *structs.InstanceTaskResponse) error {
	index, err := s.apply(structs.InstanceTaskType, entry)
	var dup *fsm.TaskAlreadyApplied
	if errors.As(err, &dup) && dup.Request != nil {
		// Started before under the same idempotency key.
		return s.replyTasked(dup.Request, reply)
	}
	if errors.As(err, &dup) {
		// Applied before: answer as the first attempt did (its
		// evaluation was announced when it committed).
		index = dup.Index
	} else if err != nil {
		return err
	}
	// A task's evaluation reached the broker as it committed
	// (eval_enqueue.go).
	reply.Index = index
	if entry.Action != nil {
		reply.RequestID = entry.Action.RequestID
	}
	if entry.Migration != nil {
		reply.MigrationID = index
	}
	if entry.Op == structs.OpCreateImage || entry.Op == structs.OpCreateBackup {
		reply.ImageID = entry.ImageID
	}
	inst, err := s.fsm.State().InstanceByID(nil, entry.InstanceID)
	if err != nil {
		return err
	}
	reply.Instance = inst
	return nil
}

func (s *Server) buildTask(args *structs.InstanceTaskRequest) (*structs.InstanceTaskEntry, error) {
	state := s.fsm.State()
	inst, err := state.InstanceByID(nil, args.InstanceID)
	if err != nil {
		return nil, err
	}
	if inst == nil || (!args.Admin && args.ProjectID != "" && inst.ProjectID != args.ProjectID) {
		return nil, structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", args.InstanceID)
	}
	if adminOps[args.Op] && !args.Admin && args.ProjectID != "" {
		return nil, structs.Errorf(structs.KindPermission, "Policy doesn't allow %s to be performed.", args.Op)
	}
	if err := checkLock(inst, args); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	requestID := args.RequestID
	if requestID == "" {
		requestID = "req-" + uuid.NewString()
	}
	entry := &structs.InstanceTaskEntry{
		InstanceID: inst.ID, Op: args.Op, ImageID: args.ImageID, ImageProperties: args.ImageProperties,
		Reason: args.Reason, Rotation: args.Rotation, UpdatedAt: now,
		Action: &structs.InstanceAction{RequestID: requestID, InstanceID: inst.ID, Action: actionName(args.Op),
			ProjectID: inst.ProjectID, UserID: args.UserID, StartTime: now},
	}
	switch args.Op {
	case structs.OpResetState:
		// Nova records no instance action for a reset.
		entry.State, entry.Action = args.State, nil
	case structs.OpLock:
		entry.LockedBy = "owner"
		if args.Admin && (args.ProjectID == "" || args.ProjectID != inst.ProjectID) {
			entry.LockedBy = "admin"
		}
	case structs.OpRebuild:
		if err := s.rebuildTask(state, inst, args, entry); err != nil {
			return nil, err
		}
	case structs.OpResize:
		if err := s.resizeTask(state, inst, args, entry); err != nil {
			return nil, err
		}
	case structs.OpShelve:
		entry.Offload = s.config.ShelvedOffloadTime == 0
	case structs.OpAttachVolume, structs.OpDetachVolume, structs.OpSwapVolume:
		if err := s.volumeTask(args, entry); err != nil {
			return nil, err
		}
	}
	if err := s.resolveTarget(state, inst, args, entry); err != nil {
		return nil, err
	}
	if err := s.checkMoveSupported(state, inst, entry); err != nil {
		return nil, err
	}
	if trigger, ok := moveTriggers[args.Op]; ok && !(args.Op == structs.OpUnshelve && inst.VMState != structs.VMStateShelvedOffloaded) {
		s.moveTask(state, inst, args, entry, trigger, now)
	}
	return entry, nil
}

// rebuildTask fills a rebuild's entry: the boot volume reimaged when
// asked (once the cluster can), and the image, a new one checked as a
// create's would be with its properties replacing the old image's.
func (s *Server) rebuildTask(state *fsm.StateStore, inst *structs.Instance, args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry) error {
	if args.ReimageBootVolume {
		if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelReimageVolume {
			return structs.Errorf(structs.KindUnavailable, "boot volumes can be reimaged once every server is upgraded (%s, the cluster is at %s)",
				structs.FSMLevelReimageVolume, l)
		}
		entry.ReimageBootVolume = true
	}
	if args.ImageID == "" {
		entry.ImageID, entry.ImageProperties = inst.ImageID, inst.ImageProperties
		return nil
	}
	// The new image is checked as a create's would be, and its
	// properties replace the old image's.
	access := structs.ImageAccess{ProjectID: args.ProjectID, Admin: args.Admin || args.ProjectID == ""}
	flavor := inst.Flavor
	if flavor == nil {
		flavor = &structs.Flavor{}
	}
	img, ok, err := resolveImage(state, args.ImageID, access, flavor)
	if err != nil {
		return err
	}
	if ok {
		entry.ImageID, entry.ImageProperties = img.ID, maps.Clone(img.Properties)
	} else if args.ImageProperties == nil {
		entry.ImageProperties = inst.ImageProperties // no image service records: keep what is known
	}
	return nil
}

// resizeTask fills a resize's entry with the new flavor, which must
// exist, be enabled and keep the disks no smaller (Nova's 400s), and
// whether the instance may stay on its host.
func (s *Server) resizeTask(state *fsm.StateStore, inst *structs.Instance, args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry) error {
	if args.FlavorID == "" {
		return structs.Errorf(structs.KindInvalid, "resize needs a flavor")
	}
	f, err := state.FlavorByIDOrName(nil, args.FlavorID)
	if err != nil {
		return err
	}
	if f == nil {
		return structs.Errorf(structs.KindInvalid, "Flavor %s could not be found.", args.FlavorID)
	}
	if f.Disabled {
		return structs.Errorf(structs.KindInvalid, "flavor %q is disabled", f.Name)
	}
	if err := checkResizeDisks(inst.Flavor, f); err != nil {
		return err
	}
	entry.NewFlavor = f.Copy()
	if s.config.AllowResizeToSameHost {
		// Older servers would misapply a same-host resize (FSMLevel).
		l, _ := s.ClusterFSMLevel()
		entry.AllowSameHost = l >= structs.FSMLevelSameHostResize
	}
	return nil
}

// moveTask gives a move its evaluation (the scheduler picks the
// destination), its migration record and what the cluster's level lets
// the move carry: a disk token for copies and live prepares, and the
// evacuation's disk rule.
func (s *Server) moveTask(state *fsm.StateStore, inst *structs.Instance, args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry, trigger string, now int64) {
	entry.Eval = &structs.Evaluation{ID: uuid.NewString(), InstanceIDs: []string{inst.ID}, TriggeredBy: trigger,
		Status: structs.EvalStatusPending, CreatedAt: now}
	if args.Op != structs.OpUnshelve {
		entry.Migration = s.newMigration(state, inst, entry)
	}
	if args.Op == structs.OpResize || args.Op == structs.OpMigrate {
		// Older servers would drop the token and give the
		// destination fresh disks (FSMLevel).
		if l, _ := s.ClusterFSMLevel(); l >= structs.FSMLevelDiskCopy {
			entry.DiskToken = rand.Text()
		}
	}
	if args.Op == structs.OpLiveMigrate {
		// With it the source has the destination prepare (fetch the
		// image) first; older servers would drop it (FSMLevel).
		if l, _ := s.ClusterFSMLevel(); l >= structs.FSMLevelLivePrepare {
			entry.DiskToken = rand.Text()
		}
	}
	if args.Op == structs.OpEvacuate {
		// Older servers would drop the rule and rebuild from the
		// image whatever the caller said (FSMLevel).
		if l, _ := s.ClusterFSMLevel(); l >= structs.FSMLevelEvacuateDisk {
			entry.EvacuateDisk = evacuateDisk(args.OnSharedStorage)
		}
	}
}

// checkLock refuses a locked instance's operations to everyone but
// admins, and an admin's lock to its owner (Nova's locked_by rules).
func checkLock(inst *structs.Instance, args *structs.InstanceTaskRequest) error {
	if !inst.Locked || args.Admin {
		return nil
	}
	if args.Op == structs.OpUnlock {
		if inst.LockedBy == "admin" {
			return structs.Errorf(structs.KindPermission, "Instance %s was locked by an administrator and can only be unlocked by one.", inst.ID)
		}
		return nil
	}
	if args.Op == structs.OpLock {
		if inst.LockedBy == "admin" {
			// Re-locking would make the lock the owner's to lift.
			return structs.Errorf(structs.KindConflict, "Instance %s is locked by an administrator", inst.ID)
		}
		return nil
	}
	return structs.Errorf(structs.KindConflict, "Instance %s is locked", inst.ID)
}

// resolveTarget turns an admin's target host into an id and checks it.
func (s *Server) resolveTarget(state *fsm.StateStore, inst *structs.Instance, args *structs.InstanceTaskRequest, entry *structs.InstanceTaskEntry) error {
	if args.TargetHost == "" {
		return nil
	}
	if !args.Admin && args.ProjectID != "" {
		return structs.Errorf(structs.KindPermission, "Policy doesn't allow a target host to be chosen.")
	}
	h, err := hostByIDOrName(state, args.TargetHost)
	if err != nil {
		return err
	}
	if h == nil {
		return structs.Errorf(structs.KindInvalid, "Compute host %s could not be found.", args.TargetHost)
	}
	if h.ID == inst.HostID {
		return sameHostError(args.Op, inst, h)
	}
	if !h.Up() {
		return structs.Errorf(structs.KindInvalid, "Compute service of %s is unavailable at this time.", h.Name)
	}
	if args.Op == structs.OpLiveMigrate && !h.HasCapability(structs.HostCapabilityLiveMigrate) {
		return structs.Errorf(structs.KindConflict, "Cannot live-migrate to host %s: its %s driver does not support live migration", h.Name, h.Driver)
	}
	entry.TargetHostID = h.ID
	return nil
}

func hostByIDOrName(state *fsm.StateStore, key string) (*structs.Host, error) {
	h, err := state.HostByID(nil, key)
	if err != nil || h != nil {
		return h, err
	}
	hosts, err := state.Hosts(nil)
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		if h.Name == key {
			return h, nil
		}
	}
	return nil, nil
}

func (s *Server) newMigration(state *fsm.StateStore, inst *structs.Instance, entry *structs.InstanceTaskEntry) *structs.Migration {
	m := &structs.Migration{UUID: uuid.NewString(), InstanceID: inst.ID, ProjectID: inst.ProjectID, UserID: inst.UserID,
		SourceHostID: inst.HostID, OldFlavorID: inst.FlavorID, NewFlavorID: inst.FlavorID}
	if h, err := state.HostByID(nil, inst.HostID); err == nil && h != nil {
		m.SourceHost = h.Name
	}
	if entry.NewFlavor != nil {
		m.NewFlavorID = entry.NewFlavor.ID
	}
	return m
}

// actionName is the os-instance-actions name of an operation.
func actionName(op string) string {
	switch op {
	case structs.OpRebootSoft, structs.OpRebootHard:
		return "reboot"
	case structs.OpSoftDelete:
		return "delete"
	case structs.OpAutoConfirm:
		return "confirmResize"
	}
	return op
}

// systemTask starts one of the servers' own operations (auto-confirm,
// offload, reclaim, abort) as an admin would.
func (s *Server) systemTask(instanceID, op, reason string) error {
	var reply structs.InstanceTaskResponse
	entry, err := s.buildTask(&structs.InstanceTaskRequest{InstanceID: instanceID, Op: op, Reason: reason, Admin: true})
	if err != nil {
		return fmt.Errorf("%s of instance %s: %w", op, instanceID, err)
	}
	if op == structs.OpAbortMigration {
		entry.Action = nil
	}
	return s.applyTask(entry, &reply)
}

// evacuateDisk is the rule an evacuation's destination follows for the
// disk: the caller's on_shared_storage when it gave one, else finding out.
func evacuateDisk(onShared *bool) string {
	switch {
	case onShared == nil:
		return structs.EvacuateDiskDetect
	case *onShared:
		return structs.EvacuateDiskShared
	}
	return structs.EvacuateDiskImage
}

// sameHostError is Nova's refusal of a move onto the instance's own
// host, worded per operation as Nova words it: CannotMigrateToSameHost
// for a cold migration, UnableToMigrateToSelf for a live one, the
// evacuate API's own words otherwise. All are 400s.
func sameHostError(op string, inst *structs.Instance, h *structs.Host) error {
	switch op {
	case structs.OpMigrate:
		return structs.Errorf(structs.KindInvalid, "Cannot migrate to the host where the server exists.")
	case structs.OpLiveMigrate:
		return structs.Errorf(structs.KindInvalid, "Unable to migrate instance (%s) to current host (%s).", inst.ID, h.Name)
	}
	return structs.Errorf(structs.KindInvalid, "The target host can't be the same one.")
}
