package structs

// Results of an instance action event, as Nova words them.
const (
	EventSuccess = "Success"
	EventError   = "Error"
)

// InstanceAction is one user or system action on an instance and its
// events (Nova's os-instance-actions). It outlives the instance.
type InstanceAction struct {
	// RequestID is the id ("req-…") of the request that started it;
	// with InstanceID it identifies the action.
	RequestID  string
	InstanceID string
	// Action is Nova's name: create, delete, reboot, stop, start, pause,
	// resize, confirmResize, migrate, live-migration, evacuate, …
	Action    string
	ProjectID string
	UserID    string
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
	Event      string
	StartTime  int64
	FinishTime int64
	// Result is EventSuccess, EventError, or empty while it runs.
	Result  string
	Details string
	// HostID is the host the event ran on, if any.
	HostID string
}

// Copy returns a deep copy.
func (a *InstanceAction) Copy() *InstanceAction {
	if a == nil {
		return nil
	}
	c := *a
	c.Events = make([]*InstanceActionEvent, len(a.Events))
	for i, e := range a.Events {
		ec := *e
		c.Events[i] = &ec
	}
	return &c
}

// actionWithEvent is an action and its first event in one allocation.
type actionWithEvent struct {
	action InstanceAction
	events [1]*InstanceActionEvent
	event  InstanceActionEvent
}

// NewInstanceAction returns a with ev as its only event, both (and the
// events' slice) in one allocation: an action recorded with every
// create and delete is then one object of 240 bytes instead of three
// (160 + 80 + 8). Copy still copies the events apart.
func NewInstanceAction(a InstanceAction, ev InstanceActionEvent) *InstanceAction {
	b := &actionWithEvent{action: a, event: ev}
	b.events[0] = &b.event
	b.action.Events = b.events[:]
	return &b.action
}

// Migration statuses, as Nova's os-migrations shows them.
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

// Migration types, as Nova names them.
const (
	MigrationTypeResize     = "resize"
	MigrationTypeMigration  = "migration"
	MigrationTypeLive       = "live-migration"
	MigrationTypeEvacuation = "evacuation"
)

// Migration records one move of an instance between hosts.
type Migration struct {
	// ID is the Raft index that created it: unique, ordered, and small
	// like Nova's integer ids.
	ID           uint64
	UUID         string
	InstanceID   string
	ProjectID    string
	UserID       string
	Type         string
	Status       string
	SourceHostID string
	SourceHost   string
	DestHostID   string
	DestHost     string
	OldFlavorID  string
	NewFlavorID  string
	CreatedAt    int64
	UpdatedAt    int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (m *Migration) Copy() *Migration {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// Terminal reports whether the migration is over.
func (m *Migration) Terminal() bool {
	switch m.Status {
	case MigrationConfirmed, MigrationReverted, MigrationCompleted, MigrationDone, MigrationError, MigrationFailed:
		return true
	}
	return false
}
