package api

import (
	"net/http"
	"net/url"
)

// Instance operations for Instances.Perform: the names Nova gives its
// server actions. ActionReboot ("reboot", with ActionOptions.Hard) is
// accepted too.
const (
	OpStart         = "start"
	OpStop          = "stop"
	OpRebootSoft    = "reboot_soft"
	OpRebootHard    = "reboot_hard"
	OpPause         = "pause"
	OpUnpause       = "unpause"
	OpSuspend       = "suspend"
	OpResume        = "resume"
	OpLock          = "lock" // takes ActionOptions.Reason
	OpUnlock        = "unlock"
	OpRescue        = "rescue" // takes ActionOptions.Image
	OpUnrescue      = "unrescue"
	OpRebuild       = "rebuild" // takes ActionOptions.Image (default: the current image)
	OpResize        = "resize"  // needs ActionOptions.Flavor
	OpConfirmResize = "confirmResize"
	OpRevertResize  = "revertResize"
	OpMigrate       = "migrate"        // takes ActionOptions.Host
	OpLiveMigrate   = "live-migration" // takes ActionOptions.Host
	OpEvacuate      = "evacuate"       // takes ActionOptions.Host
	OpShelve        = "shelve"
	OpShelveOffload = "shelveOffload"
	OpUnshelve      = "unshelve" // takes ActionOptions.Host
	OpRestore       = "restore"
	// OpAttachVolume hot-plugs a volume kept on the instance's host
	// (needs ActionOptions.Volume, takes Device); OpDetachVolume unplugs
	// it (needs Volume).
	OpAttachVolume = "attach_volume"
	OpDetachVolume = "detach_volume"
)

// Task kinds (Task.Kind).
const (
	TaskKindPower       = "power"
	TaskKindRebuild     = "rebuild"
	TaskKindResize      = "resize"
	TaskKindMigrate     = "migrate"
	TaskKindLiveMigrate = "live-migration"
	TaskKindEvacuate    = "evacuate"
	TaskKindShelve      = "shelve"
	TaskKindOffload     = "shelve-offload"
	TaskKindUnshelve    = "unshelve"
	TaskKindRevert      = "revert-resize"
	TaskKindConfirm     = "confirm-resize"
)

// Results of an instance action event.
const (
	EventSuccess = "Success"
	EventError   = "Error"
)

// Task is an instance's operation in progress, which the servers advance
// step by step.
type Task struct {
	// Kind is one of the TaskKind constants.
	Kind string
	// Step is what the task waits for: schedule, agent, source-stop,
	// dest-spawn, source-send, dest-delete, source-delete, source-start.
	Step string
	// Op is the operation that started it (an Op constant).
	Op string
	// RequestID names the InstanceAction it reports to.
	RequestID string
	// MigrationID is the migration record of a move, 0 for none.
	MigrationID uint64
	EvalID      string

	SourceHostID  string
	SourceAllocID string
	DestHostID    string
	DestAllocID   string
	// TargetHostID is the host an admin asked for, if any.
	TargetHostID string

	// NewFlavor is the flavor a resize moves to.
	NewFlavor *Flavor `json:",omitempty"`
	// PowerOn says whether the instance runs at the end.
	PowerOn     bool
	PrevVMState string
	// StartedAt is unix nanoseconds.
	StartedAt int64
}

// PendingResize is a finished resize or cold migration awaiting
// OpConfirmResize or OpRevertResize.
type PendingResize struct {
	// Kind is TaskKindResize or TaskKindMigrate.
	Kind          string
	MigrationID   uint64
	SourceHostID  string
	SourceAllocID string
	OldFlavor     *Flavor `json:",omitempty"`
	PowerOn       bool
	// FinishedAt (unix nanoseconds) starts the automatic confirm window.
	FinishedAt int64
}

// ActionOptions are the arguments of an operation; each applies only to
// the operations noted at the Op constants, and the agent refuses the
// others.
type ActionOptions struct {
	// Hard makes ActionReboot a hard reboot.
	Hard bool `json:",omitempty"`
	// Flavor (id or name) is the flavor a resize moves to.
	Flavor string `json:",omitempty"`
	// Image is a rebuild's new image or a rescue's image.
	Image string `json:",omitempty"`
	// Host (id or name) is where a migrate, live migration, evacuate or
	// unshelve should put the instance; the scheduler picks when empty.
	Host string `json:",omitempty"`
	// Reason is a lock's reason.
	Reason string `json:",omitempty"`
	// Volume is the volume ID OpAttachVolume and OpDetachVolume act on;
	// Device is the guest device an attach asks for (/dev/sdX), the
	// first free one when empty.
	Volume string `json:",omitempty"`
	Device string `json:",omitempty"`
	// IdempotencyKey, sent as the Idempotency-Key header, makes Perform
	// safe to send again: a retry with the same key after an error that
	// left the outcome unknown (no leader, a lost connection) is
	// answered with the operation the first attempt started, never
	// started twice nor refused as a conflict with itself. The agent
	// picks a key of its own for a request without one.
	IdempotencyKey string `json:"-"`
}

// performRequest is the body of POST /v1/instances/{id}/actions.
type performRequest struct {
	Action string
	ActionOptions
}

// ActionResult is the answer of Perform.
type ActionResult struct {
	// RequestID names the InstanceAction that records the operation:
	// read it with ActionInfo until its events finish.
	RequestID string
	// MigrationID is the migration a move created, 0 for none.
	MigrationID uint64
	// Instance is the instance as the operation left it: usually in a
	// task (Task, TaskState) the servers carry on with.
	Instance *Instance
}

// Perform starts an operation (an Op constant, or ActionReboot) on the
// instance with the given ID. The servers check it against Nova's state
// rules (a conflict *Error when the instance's state does not allow it)
// and carry it out asynchronously: the instance's Task is set until it
// finishes, and the action RequestID records its events. opts may be nil.
func (i *Instances) Perform(id, op string, opts *ActionOptions) (*ActionResult, *WriteMeta, error) {
	body := &performRequest{Action: op}
	if opts != nil {
		body.ActionOptions = *opts
	}
	r := &request{method: http.MethodPost, path: "/v1/instances/" + url.PathEscape(id) + "/actions"}
	if body.IdempotencyKey != "" {
		r.header = http.Header{"Idempotency-Key": {body.IdempotencyKey}}
	}
	var out ActionResult
	wm, err := i.c.writeWith(r, body, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// InstanceAction is one user or system action on an instance and its
// events (Nova's os-instance-actions). It outlives the instance.
type InstanceAction struct {
	// RequestID ("req-…") identifies the action with InstanceID.
	RequestID  string
	InstanceID string
	// Action is Nova's name: create, delete, reboot, stop, start, pause,
	// resize, confirmResize, migrate, live-migration, evacuate, …
	Action    string
	ProjectID string
	UserID    string
	// StartTime and UpdatedAt are unix nanoseconds.
	StartTime int64
	UpdatedAt int64
	// Message is "Error" when an event of the action failed.
	Message string
	Events  []*InstanceActionEvent

	CreateIndex uint64
	ModifyIndex uint64
}

// InstanceActionEvent is one step of an action, with its outcome.
type InstanceActionEvent struct {
	// Event is Nova's event name (compute_reboot_instance, …).
	Event string
	// StartTime and FinishTime are unix nanoseconds; FinishTime is 0
	// while the event runs.
	StartTime  int64
	FinishTime int64
	// Result is EventSuccess, EventError, or "" while the event runs.
	Result  string
	Details string
	// HostID is the host the event ran on, if any.
	HostID string
}

// Failed reports whether an event of the action failed.
func (a *InstanceAction) Failed() bool {
	if a.Message == EventError {
		return true
	}
	for _, e := range a.Events {
		if e.Result == EventError {
			return true
		}
	}
	return false
}

// Running reports whether an event of the action has not finished.
func (a *InstanceAction) Running() bool {
	for _, e := range a.Events {
		if e.Result == "" {
			return true
		}
	}
	return false
}

// Actions returns the actions of the instance with the given ID, newest
// first, each with its events. The actions of a deleted instance are
// still listed; an ID no instance ever had lists none.
func (i *Instances) Actions(id string, q *QueryOptions) ([]*InstanceAction, *QueryMeta, error) {
	var out []*InstanceAction
	qm, err := i.c.query("/v1/instances/"+url.PathEscape(id)+"/actions", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// ActionInfo returns one action of an instance by its request ID.
func (i *Instances) ActionInfo(id, requestID string, q *QueryOptions) (*InstanceAction, *QueryMeta, error) {
	var out InstanceAction
	qm, err := i.c.query("/v1/instances/"+url.PathEscape(id)+"/actions/"+url.PathEscape(requestID), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Migrations reads migrations, the records of instances moving between
// hosts (Nova's os-migrations).
type Migrations struct{ c *Client }

// Migrations returns a handle on the /v1/migrations endpoint.
func (c *Client) Migrations() *Migrations { return &Migrations{c} }

// Migration types.
const (
	MigrationTypeResize     = "resize"
	MigrationTypeMigration  = "migration"
	MigrationTypeLive       = "live-migration"
	MigrationTypeEvacuation = "evacuation"
)

// Migration statuses, as Nova shows them.
const (
	MigrationPreMigrating = "pre-migrating"
	MigrationMigrating    = "migrating"
	MigrationPostMigrate  = "post-migrating"
	MigrationFinished     = "finished"
	MigrationConfirming   = "confirming"
	MigrationConfirmed    = "confirmed"
	MigrationReverting    = "reverting"
	MigrationReverted     = "reverted"
	MigrationRunning      = "running"
	MigrationCompleted    = "completed"
	MigrationAccepted     = "accepted"
	MigrationDone         = "done"
	MigrationError        = "error"
	MigrationFailed       = "failed"
)

// Migration records one move of an instance between hosts.
type Migration struct {
	// ID is small and ordered, like Nova's integer ids.
	ID         uint64
	UUID       string
	InstanceID string
	ProjectID  string
	UserID     string
	// Type is one of the MigrationType constants.
	Type string
	// Status is one of the Migration status constants.
	Status       string
	SourceHostID string
	SourceHost   string
	DestHostID   string
	DestHost     string
	OldFlavorID  string
	NewFlavorID  string
	// CreatedAt and UpdatedAt are unix nanoseconds.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Terminal reports whether the migration is over.
func (m *Migration) Terminal() bool {
	switch m.Status {
	case MigrationConfirmed, MigrationReverted, MigrationCompleted, MigrationDone, MigrationError, MigrationFailed:
		return true
	}
	return false
}

// List returns the migrations of the instance with the given ID, or all
// migrations when instanceID is "", oldest first.
func (m *Migrations) List(instanceID string, q *QueryOptions) ([]*Migration, *QueryMeta, error) {
	var params url.Values
	if instanceID != "" {
		params = url.Values{"instance": {instanceID}}
	}
	var out []*Migration
	qm, err := m.c.queryParams("/v1/migrations", params, &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}
