package structs

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Instance groups: declarative sets of identical instances, written as
// HCL specs (`instance "web" { count = 3 … }`), stored with their
// versions, and converged by the leader's group reconciler.

// Limits and defaults of instance group specs.
const (
	// MaxGroupCount bounds a group's count, as a create request is.
	MaxGroupCount = 1000
	// MaxGroupUserData bounds user_data, as Nova's 65535 bytes do.
	MaxGroupUserData = 65535
	// MaxGroupVersions is how many versions of a group are kept; older
	// ones are pruned, oldest first.
	MaxGroupVersions = 50
	// MaxGroupMetadata is Nova's default metadata_items quota.
	MaxGroupMetadata = 128

	// DefaultGroupMaxParallel, DefaultGroupHealthCheck and
	// DefaultGroupMinHealthyTime are the update block's defaults.
	DefaultGroupMaxParallel    = 1
	DefaultGroupHealthCheck    = GroupHealthActive
	DefaultGroupMinHealthyTime = 10 * time.Second
	// MaxGroupMinHealthyTime bounds min_healthy_time.
	MaxGroupMinHealthyTime = time.Hour
)

// Health checks of a group's update block.
const (
	// GroupHealthActive waits for a member to be ACTIVE, with no task,
	// for min_healthy_time.
	GroupHealthActive = "active"
	// GroupHealthNone waits only for a member's operation to finish.
	GroupHealthNone = "none"
)

// Constraint operators.
const (
	ConstraintEqual    = "="
	ConstraintNotEqual = "!="
	ConstraintRegexp   = "regexp"
	ConstraintVersion  = "version"
	ConstraintIsSet    = "is_set"
	ConstraintIsNotSet = "is_not_set"
)

// ConstraintOperators are the operators a constraint may use.
var ConstraintOperators = []string{ConstraintEqual, ConstraintNotEqual, ConstraintRegexp, ConstraintVersion, ConstraintIsSet, ConstraintIsNotSet}

// ConstraintAttributePrefix starts every constraint attribute: the only
// thing a constraint can read is the host.
const ConstraintAttributePrefix = "host."

// InstanceGroupSpec is what an `instance "NAME" { … }` block of an HCL
// spec declares: Count identical instances named NAME-1 … NAME-Count.
type InstanceGroupSpec struct {
	Name  string
	Count int
	// Flavor (id or name) and Image (id or name) are resolved when the
	// members are created.
	Flavor   string
	Image    string
	AZ       string
	KeyName  string
	Metadata map[string]string
	UserData string
	// Networks are the networks the members attach to, in order.
	Networks []*GroupNetwork
	// Placement, when set, makes a server group for the spec.
	Placement *GroupPlacement
	// Constraints restrict the hosts the members may run on.
	Constraints []*Constraint
	// Update says how a changed spec rolls out; nil means the defaults.
	Update *GroupUpdate
}

// GroupNetwork is a network the members attach to.
type GroupNetwork struct {
	Name    string
	FixedIP string
}

// GroupPlacement is the server group policy of a spec.
type GroupPlacement struct {
	Policy string
	// MaxPerHost is anti-affinity's max_server_per_host, 0 for unset.
	MaxPerHost int
}

// Constraint is a requirement on the host of an instance, such as
// host.arch = x86_64. The scheduler honours it beside the flavor's
// capabilities: extra specs (ComputeCapabilitiesFilter).
type Constraint struct {
	// Attribute is host.<key>: host.arch, host.hypervisor_type,
	// host.hypervisor_version, host.name, host.driver.<capability> or
	// any attribute the host's agent reports.
	Attribute string
	// Operator is one of ConstraintOperators; "" means "=".
	Operator string
	Value    string
}

// GroupUpdate is how a changed spec rolls out to the members.
type GroupUpdate struct {
	// MaxParallel is how many members are changed at once; 0 means all.
	MaxParallel int
	// HealthCheck is GroupHealthActive or GroupHealthNone.
	HealthCheck string
	// MinHealthyTime is how long a changed member must stay healthy
	// before the next one is changed.
	MinHealthyTime time.Duration
}

// Copy returns a deep copy.
func (s *InstanceGroupSpec) Copy() *InstanceGroupSpec {
	if s == nil {
		return nil
	}
	c := *s
	c.Metadata = copyStringMap(s.Metadata)
	c.Networks = nil
	for _, n := range s.Networks {
		nc := *n
		c.Networks = append(c.Networks, &nc)
	}
	if s.Placement != nil {
		p := *s.Placement
		c.Placement = &p
	}
	c.Constraints = copyConstraints(s.Constraints)
	if s.Update != nil {
		u := *s.Update
		c.Update = &u
	}
	return &c
}

func copyConstraints(list []*Constraint) []*Constraint {
	if len(list) == 0 {
		return nil
	}
	out := make([]*Constraint, len(list))
	for i, c := range list {
		cc := *c
		out[i] = &cc
	}
	return out
}

// Canonicalize fills in defaults and drops empty collections, so equal
// specs compare equal whatever their author left out.
func (s *InstanceGroupSpec) Canonicalize() {
	if len(s.Metadata) == 0 {
		s.Metadata = nil
	}
	if len(s.Networks) == 0 {
		s.Networks = nil
	}
	if len(s.Constraints) == 0 {
		s.Constraints = nil
	}
	for _, c := range s.Constraints {
		if c.Operator == "" || c.Operator == "==" {
			c.Operator = ConstraintEqual
		}
	}
	if s.Update == nil {
		s.Update = &GroupUpdate{MaxParallel: DefaultGroupMaxParallel, HealthCheck: DefaultGroupHealthCheck, MinHealthyTime: DefaultGroupMinHealthyTime}
	}
	if s.Update.HealthCheck == "" {
		s.Update.HealthCheck = DefaultGroupHealthCheck
	}
}

// Equal reports whether two canonical specs declare the same thing.
func (s *InstanceGroupSpec) Equal(o *InstanceGroupSpec) bool {
	return reflect.DeepEqual(s, o)
}

// UpdatePolicy returns the spec's update block, or the defaults.
func (s *InstanceGroupSpec) UpdatePolicy() GroupUpdate {
	if s.Update == nil {
		return GroupUpdate{MaxParallel: DefaultGroupMaxParallel, HealthCheck: DefaultGroupHealthCheck, MinHealthyTime: DefaultGroupMinHealthyTime}
	}
	return *s.Update
}

// groupNamePattern keeps a group's name usable in its members' names and
// its server groups' names.
var groupNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ValidGroupName reports whether name may name an instance group.
func ValidGroupName(name string) bool { return groupNamePattern.MatchString(name) }

// Validate checks a spec on its own; resolving its flavor, image and
// zone is the servers' job.
func (s *InstanceGroupSpec) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if !ValidGroupName(s.Name) {
		add("name %q must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", s.Name)
	}
	if s.Count < 0 || s.Count > MaxGroupCount {
		add("count must be between 0 and %d", MaxGroupCount)
	}
	if strings.TrimSpace(s.Flavor) == "" {
		add("a flavor is required")
	}
	if strings.TrimSpace(s.Image) == "" {
		add("an image is required")
	}
	if len(s.Metadata) > MaxGroupMetadata {
		add("at most %d metadata items are allowed", MaxGroupMetadata)
	}
	for _, k := range sortedKeys(s.Metadata) {
		if k == "" || len(k) > 255 || len(s.Metadata[k]) > 255 {
			add("metadata %q: keys must be 1-255 and values 0-255 characters", k)
		}
	}
	if len(s.UserData) > MaxGroupUserData {
		add("user_data is %d bytes; at most %d are allowed", len(s.UserData), MaxGroupUserData)
	}
	seen := map[string]bool{}
	for _, n := range s.Networks {
		switch {
		case n == nil || strings.TrimSpace(n.Name) == "":
			add("a network needs a name")
		case seen[n.Name]:
			add("network %q is listed twice", n.Name)
		}
		if n != nil {
			seen[n.Name] = true
		}
	}
	if p := s.Placement; p != nil {
		if err := (&ServerGroup{Name: "x", Policy: p.Policy, MaxServerPerHost: p.MaxPerHost}).Validate(); err != nil {
			add("placement: %s", strings.TrimPrefix(Message(err), "server group: "))
		}
	}
	for _, c := range s.Constraints {
		if err := c.Validate(); err != nil {
			add("%s", Message(err))
		}
	}
	if u := s.Update; u != nil {
		if u.MaxParallel < 0 {
			add("update: max_parallel must be 0 (all at once) or more")
		}
		if u.HealthCheck != GroupHealthActive && u.HealthCheck != GroupHealthNone {
			add("update: health_check must be %q or %q", GroupHealthActive, GroupHealthNone)
		}
		if u.MinHealthyTime < 0 || u.MinHealthyTime > MaxGroupMinHealthyTime {
			add("update: min_healthy_time must be between 0s and %s", MaxGroupMinHealthyTime)
		}
	}
	if len(errs) > 0 {
		return Errorf(KindInvalid, "instance group %q: %s", s.Name, strings.Join(errs, "; "))
	}
	return nil
}

// Validate checks a constraint on its own.
func (c *Constraint) Validate() error {
	var errs []string
	key, ok := strings.CutPrefix(c.Attribute, ConstraintAttributePrefix)
	if !ok || key == "" {
		errs = append(errs, fmt.Sprintf("attribute %q must be host.<key>, such as host.arch", c.Attribute))
	}
	op := c.Operator
	if op == "" || op == "==" {
		op = ConstraintEqual
	}
	switch op {
	case ConstraintEqual, ConstraintNotEqual:
	case ConstraintRegexp:
		if _, err := regexp.Compile(c.Value); err != nil {
			errs = append(errs, fmt.Sprintf("value %q is not a regular expression: %v", c.Value, err))
		}
	case ConstraintVersion:
		if strings.TrimSpace(c.Value) == "" {
			errs = append(errs, "a version constraint needs a value such as \">= 6.0\"")
		}
	case ConstraintIsSet, ConstraintIsNotSet:
		if c.Value != "" {
			errs = append(errs, fmt.Sprintf("operator %q takes no value", op))
		}
	default:
		errs = append(errs, fmt.Sprintf("operator %q must be one of %s", c.Operator, strings.Join(ConstraintOperators, ", ")))
	}
	if len(errs) > 0 {
		return Errorf(KindInvalid, "constraint %s: %s", c, strings.Join(errs, "; "))
	}
	return nil
}

// String renders a constraint as "host.arch = x86_64".
func (c *Constraint) String() string {
	op := c.Operator
	if op == "" {
		op = ConstraintEqual
	}
	if c.Value == "" && (op == ConstraintIsSet || op == ConstraintIsNotSet) {
		return c.Attribute + " " + op
	}
	return c.Attribute + " " + op + " " + c.Value
}

// ConstraintsString renders constraints for diffs, sorted.
func ConstraintsString(list []*Constraint) string {
	parts := make([]string, 0, len(list))
	for _, c := range list {
		parts = append(parts, c.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// GroupMemberName is the name of a group's member in slot n (1-based).
func GroupMemberName(group string, n int) string { return fmt.Sprintf("%s-%d", group, n) }

// ServerGroupPrefix starts the names of the server groups made for an
// instance group; ServerGroupNameFor names the one of a version.
func ServerGroupPrefix(group string) string { return "instance-group/" + group + "/" }

// ServerGroupNameFor names the server group made for a version of a
// group.
func ServerGroupNameFor(group string, version uint64) string {
	return fmt.Sprintf("%sv%d", ServerGroupPrefix(group), version)
}

// InstanceGroup is a stored group: its latest spec and version.
type InstanceGroup struct {
	Name string
	Spec *InstanceGroupSpec
	// Version is the latest version, from 1.
	Version uint64
	// ServerGroupID is the server group of the spec's placement, "" for
	// none.
	ServerGroupID string
	// Stopped says every member is to be deleted; Purge that the group
	// is to be removed once they are gone.
	Stopped bool
	Purge   bool
	// SubmitTime is when the latest version was submitted (unix ns).
	SubmitTime int64

	// ModifyIndex changes only when a version is stored, so it is the
	// check index of a safe concurrent edit.
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (g *InstanceGroup) Copy() *InstanceGroup {
	if g == nil {
		return nil
	}
	c := *g
	c.Spec = g.Spec.Copy()
	return &c
}

// InstanceGroupVersion is one stored version of a group.
type InstanceGroupVersion struct {
	Name          string
	Version       uint64
	Spec          *InstanceGroupSpec
	ServerGroupID string
	Stopped       bool
	Purge         bool
	// RevertedFrom is the version this one restored, 0 for none.
	RevertedFrom uint64
	SubmitTime   int64
	CreateIndex  uint64
}

// Copy returns a deep copy.
func (v *InstanceGroupVersion) Copy() *InstanceGroupVersion {
	if v == nil {
		return nil
	}
	c := *v
	c.Spec = v.Spec.Copy()
	return &c
}

// Deployment statuses.
const (
	DeploymentRunning    = "running"
	DeploymentSuccessful = "successful"
	DeploymentFailed     = "failed"
	DeploymentStopping   = "stopping"
	DeploymentStopped    = "stopped"
)

// GroupDeployment is the progress of a group's latest version, written
// by the leader's reconciler whenever it changes.
type GroupDeployment struct {
	Name    string
	Version uint64
	Status  string
	// Description says what the reconciler is waiting for, or why the
	// deployment failed.
	Description string
	// Desired is the count; Placed the members that exist; Running
	// those ACTIVE; Failed those in ERROR or on a down host; Updated
	// those that match the version; Healthy those updated and healthy
	// for min_healthy_time.
	Desired, Placed, Running, Failed, Updated, Healthy int
	StartedAt                                          int64
	UpdatedAt                                          int64
	CreateIndex                                        uint64
	ModifyIndex                                        uint64
}

// Copy returns a copy.
func (d *GroupDeployment) Copy() *GroupDeployment {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// SameProgress reports whether two deployments say the same thing,
// timestamps and indexes aside.
func (d *GroupDeployment) SameProgress(o *GroupDeployment) bool {
	if d == nil || o == nil {
		return d == o
	}
	a, b := *d, *o
	a.StartedAt, a.UpdatedAt, a.CreateIndex, a.ModifyIndex = 0, 0, 0, 0
	b.StartedAt, b.UpdatedAt, b.CreateIndex, b.ModifyIndex = 0, 0, 0, 0
	return a == b
}

// Raft entries of instance groups.

// InstanceGroupRegisterEntry stores a new version of a group. With
// EnforceIndex the FSM refuses it unless the group's ModifyIndex is
// CheckIndex (0: the group must not exist).
type InstanceGroupRegisterEntry struct {
	Spec          *InstanceGroupSpec
	EnforceIndex  bool
	CheckIndex    uint64
	ServerGroupID string
	// ServerGroup, when set, is a server group to create for the spec
	// in the same entry (its ID is ServerGroupID).
	ServerGroup  *ServerGroup
	RevertedFrom uint64
	SubmitTime   int64
}

// InstanceGroupStopEntry stores a stopped version of a group.
type InstanceGroupStopEntry struct {
	Name         string
	Purge        bool
	EnforceIndex bool
	CheckIndex   uint64
	SubmitTime   int64
}

// InstanceGroupDeploymentEntry records a deployment's progress.
type InstanceGroupDeploymentEntry struct {
	Deployment *GroupDeployment
}

// InstanceGroupDeleteEntry removes a purged group, its versions, its
// deployment and the server groups made for it.
type InstanceGroupDeleteEntry struct {
	Name           string
	ServerGroupIDs []string
}

// RPC requests and responses.

// InstanceGroupRegisterRequest stores a spec as the group's next
// version (unless it is the same as the latest one).
type InstanceGroupRegisterRequest struct {
	Spec         *InstanceGroupSpec
	EnforceIndex bool
	CheckIndex   uint64
	WriteRequest
}

// InstanceGroupRegisterResponse says which version the group is at.
type InstanceGroupRegisterResponse struct {
	Name    string
	Version uint64
	// Changed is false when the spec was the latest version already.
	Changed bool
	// GroupModifyIndex is the group's ModifyIndex after the write, the
	// check index of the next edit.
	GroupModifyIndex uint64
	WriteMeta
}

// InstanceGroupPlanRequest asks what registering Spec would do.
type InstanceGroupPlanRequest struct {
	Spec *InstanceGroupSpec
	QueryOptions
}

// InstanceGroupPlanResponse carries the plan.
type InstanceGroupPlanResponse struct {
	Plan *GroupPlan
	QueryMeta
}

// InstanceGroupListRequest lists groups.
type InstanceGroupListRequest struct {
	QueryOptions
}

// InstanceGroupListResponse carries group summaries by name.
type InstanceGroupListResponse struct {
	Groups []*InstanceGroupSummary
	QueryMeta
}

// InstanceGroupSummary is a group in a list.
type InstanceGroupSummary struct {
	Name       string
	Version    uint64
	Stopped    bool
	Purge      bool
	Desired    int
	Deployment *GroupDeployment
	SubmitTime int64

	CreateIndex uint64
	ModifyIndex uint64
}

// InstanceGroupSpecificRequest reads one group (or its versions).
type InstanceGroupSpecificRequest struct {
	Name string
	QueryOptions
}

// InstanceGroupResponse is a group with its deployment and members.
type InstanceGroupResponse struct {
	Group      *InstanceGroup
	Deployment *GroupDeployment
	// Members are the group's instances, by name then creation.
	Members []*Instance
	QueryMeta
}

// InstanceGroupVersionsResponse carries a group's versions, newest
// first.
type InstanceGroupVersionsResponse struct {
	Versions []*InstanceGroupVersion
	// Diffs are each version's changes against the version before it
	// (none for the oldest one kept).
	Diffs map[uint64][]*FieldDiff
	QueryMeta
}

// InstanceGroupStopRequest stops a group: its members are deleted, and
// with Purge the group too once they are gone.
type InstanceGroupStopRequest struct {
	Name         string
	Purge        bool
	EnforceIndex bool
	CheckIndex   uint64
	WriteRequest
}

// InstanceGroupRevertRequest stores an earlier version's spec as the
// group's next version.
type InstanceGroupRevertRequest struct {
	Name         string
	Version      uint64
	EnforceIndex bool
	CheckIndex   uint64
	WriteRequest
}

// Plans: what registering a spec would do, computed by the servers so
// every client shows the same diff.

// Plan actions of instances.
const (
	PlanCreate  = "create"
	PlanUpdate  = "update"  // in place: resize, metadata
	PlanReplace = "replace" // destructive: rebuild, or delete and create again
	PlanDestroy = "destroy"
	PlanNone    = "none"
)

// Field diff types and effects.
const (
	DiffAdded   = "added"
	DiffDeleted = "deleted"
	DiffEdited  = "edited"

	EffectInPlace  = "in-place"
	EffectResize   = "resize"
	EffectRebuild  = "rebuild"
	EffectRecreate = "recreate"
	EffectNone     = ""
)

// GroupPlan is what registering a spec would do.
type GroupPlan struct {
	Name string
	// Exists is false for a new group; CurrentVersion is 0 then.
	Exists         bool
	CurrentVersion uint64
	// Stopped says the current version is stopped.
	Stopped bool
	// CheckIndex is the group's ModifyIndex (0 for a new group): run
	// with -check-index to apply only if it did not change meanwhile.
	CheckIndex uint64
	// SpecChanged says the spec differs from the latest version.
	SpecChanged bool
	// Fields are the spec's changes against the latest version.
	Fields []*FieldDiff
	// Instances are the changes per member, by name.
	Instances []*InstanceDiff
	Summary   PlanSummary
	Warnings  []string
}

// Changes reports whether registering the spec would change anything.
func (p *GroupPlan) Changes() bool {
	return p.SpecChanged || p.Summary.Create+p.Summary.Update+p.Summary.Replace+p.Summary.Destroy > 0
}

// PlanSummary counts the instance changes of a plan.
type PlanSummary struct {
	Create, Update, Replace, Destroy, Unchanged int
}

// FieldDiff is one changed field.
type FieldDiff struct {
	// Name is the field as the spec spells it: flavor, image,
	// metadata[role], count, update.max_parallel, …
	Name     string
	Type     string // DiffAdded, DiffDeleted or DiffEdited
	Old, New string
	// Effect is what the change does to a member: EffectResize,
	// EffectInPlace, EffectRebuild, EffectRecreate, or none.
	Effect string
}

// InstanceDiff is one member's change.
type InstanceDiff struct {
	Name string
	// ID is the member's id, "" for one to create.
	ID     string
	Action string
	// Reason says why, beside Fields: "count lowered to 2", "in ERROR",
	// "host cmp-2 is down".
	Reason string
	Fields []*FieldDiff
}
