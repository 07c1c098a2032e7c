package api

import (
	"net/http"
	"net/url"
	"time"
)

// Groups manages instance groups: declarative sets of identical
// instances written as HCL specs (package spec parses them), stored with
// their versions and converged by the servers.
type Groups struct{ c *Client }

// Groups returns a handle on the /v1/groups endpoints.
func (c *Client) Groups() *Groups { return &Groups{c} }

// Health checks of a group's update block.
const (
	GroupHealthActive = "active"
	GroupHealthNone   = "none"
)

// Deployment statuses.
const (
	DeploymentRunning    = "running"
	DeploymentSuccessful = "successful"
	DeploymentFailed     = "failed"
	DeploymentStopping   = "stopping"
	DeploymentStopped    = "stopped"
)

// Plan actions of instances.
const (
	PlanCreate  = "create"
	PlanUpdate  = "update"
	PlanReplace = "replace"
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
)

// InstanceGroupSpec is an `instance "NAME" { … }` block: Count identical
// instances named NAME-1 … NAME-Count.
type InstanceGroupSpec struct {
	Name        string
	Count       int
	Flavor      string
	Image       string
	AZ          string
	KeyName     string
	Metadata    map[string]string
	UserData    string
	Networks    []*GroupNetwork
	Placement   *GroupPlacement
	Constraints []*Constraint
	Update      *GroupUpdate
}

// GroupNetwork is a network the members attach to.
type GroupNetwork struct {
	Name    string
	FixedIP string
}

// GroupPlacement is a spec's server group policy.
type GroupPlacement struct {
	Policy     string
	MaxPerHost int
}

// Constraint is a requirement on a member's host: host.arch = x86_64.
type Constraint struct {
	Attribute string
	Operator  string
	Value     string
}

// GroupUpdate is how a changed spec rolls out.
type GroupUpdate struct {
	MaxParallel    int
	HealthCheck    string
	MinHealthyTime time.Duration
}

// InstanceGroup is a stored group at its latest version.
type InstanceGroup struct {
	Name          string
	Spec          *InstanceGroupSpec
	Version       uint64
	ServerGroupID string
	Stopped       bool
	Purge         bool
	SubmitTime    int64
	CreateIndex   uint64
	// ModifyIndex changes only when a version is stored: it is the check
	// index of a safe concurrent edit.
	ModifyIndex uint64
}

// InstanceGroupVersion is one stored version of a group.
type InstanceGroupVersion struct {
	Name          string
	Version       uint64
	Spec          *InstanceGroupSpec
	ServerGroupID string
	Stopped       bool
	Purge         bool
	RevertedFrom  uint64
	SubmitTime    int64
	CreateIndex   uint64
	// Diff is what changed against the version before it.
	Diff []*FieldDiff
}

// GroupDeployment is the convergence of a group's latest version.
type GroupDeployment struct {
	Name        string
	Version     uint64
	Status      string
	Description string
	Desired     int
	Placed      int
	Running     int
	Failed      int
	Updated     int
	Healthy     int
	StartedAt   int64
	UpdatedAt   int64
	CreateIndex uint64
	ModifyIndex uint64
}

// InstanceGroupSummary is a group in a list.
type InstanceGroupSummary struct {
	Name        string
	Version     uint64
	Stopped     bool
	Purge       bool
	Desired     int
	Deployment  *GroupDeployment
	SubmitTime  int64
	CreateIndex uint64
	ModifyIndex uint64
}

// InstanceGroupStatus is a group with its deployment and its members.
type InstanceGroupStatus struct {
	Group      *InstanceGroup
	Deployment *GroupDeployment
	Members    []*Instance
}

// GroupWriteResponse says which version a group is at after a write.
type GroupWriteResponse struct {
	Name    string
	Version uint64
	// Changed is false when nothing was stored (the spec was the latest
	// version already, or the group was stopped already).
	Changed bool
	// GroupModifyIndex is the check index of the next edit.
	GroupModifyIndex uint64
}

// GroupPlan is what registering a spec would do, computed by the
// servers.
type GroupPlan struct {
	Name           string
	Exists         bool
	CurrentVersion uint64
	Stopped        bool
	CheckIndex     uint64
	SpecChanged    bool
	Fields         []*FieldDiff
	Instances      []*InstanceDiff
	Summary        PlanSummary
	Warnings       []string
}

// Changes reports whether registering the spec would change anything.
func (p *GroupPlan) Changes() bool {
	return p.SpecChanged || p.Summary.Create+p.Summary.Update+p.Summary.Replace+p.Summary.Destroy > 0
}

// PlanSummary counts a plan's instance changes.
type PlanSummary struct {
	Create, Update, Replace, Destroy, Unchanged int
}

// FieldDiff is one changed field.
type FieldDiff struct {
	Name   string
	Type   string
	Old    string
	New    string
	Effect string
}

// InstanceDiff is one member's change.
type InstanceDiff struct {
	Name   string
	ID     string
	Action string
	Reason string
	Fields []*FieldDiff
}

// GroupWriteOptions make a write safe against concurrent edits: with
// EnforceIndex it is refused (a 409) unless the group's ModifyIndex is
// CheckIndex (0 for a group that must not exist yet).
type GroupWriteOptions struct {
	EnforceIndex bool
	CheckIndex   uint64
}

type groupRegisterRequest struct {
	Spec         *InstanceGroupSpec
	EnforceIndex bool `json:",omitempty"`
	CheckIndex   uint64
}

type groupStopRequest struct {
	Purge        bool `json:",omitempty"`
	EnforceIndex bool `json:",omitempty"`
	CheckIndex   uint64
}

type groupRevertRequest struct {
	Version      uint64
	EnforceIndex bool `json:",omitempty"`
	CheckIndex   uint64
}

func groupPath(name string, rest ...string) string {
	p := "/v1/groups/" + url.PathEscape(name)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// List returns every group with its deployment, by name.
func (g *Groups) List(q *QueryOptions) ([]*InstanceGroupSummary, *QueryMeta, error) {
	var out []*InstanceGroupSummary
	qm, err := g.c.query("/v1/groups", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns a group with its deployment and members.
func (g *Groups) Info(name string, q *QueryOptions) (*InstanceGroupStatus, *QueryMeta, error) {
	var out InstanceGroupStatus
	qm, err := g.c.query(groupPath(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Versions returns a group's stored versions, newest first.
func (g *Groups) Versions(name string, q *QueryOptions) ([]*InstanceGroupVersion, *QueryMeta, error) {
	var out []*InstanceGroupVersion
	qm, err := g.c.query(groupPath(name, "versions"), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Plan asks the servers what registering spec would do; nothing changes.
func (g *Groups) Plan(spec *InstanceGroupSpec) (*GroupPlan, *WriteMeta, error) {
	var out GroupPlan
	wm, err := g.c.write(http.MethodPost, groupPath(spec.Name, "plan"), nil, &groupRegisterRequest{Spec: spec}, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Register stores spec as the group's next version; the servers then
// converge the members to it.
func (g *Groups) Register(spec *InstanceGroupSpec, opts *GroupWriteOptions) (*GroupWriteResponse, *WriteMeta, error) {
	body := &groupRegisterRequest{Spec: spec}
	if opts != nil {
		body.EnforceIndex, body.CheckIndex = opts.EnforceIndex, opts.CheckIndex
	}
	var out GroupWriteResponse
	wm, err := g.c.write(http.MethodPost, "/v1/groups", nil, body, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Stop stores a stopped version of a group: its members are deleted,
// and with purge the group too once they are gone.
func (g *Groups) Stop(name string, purge bool, opts *GroupWriteOptions) (*GroupWriteResponse, *WriteMeta, error) {
	body := &groupStopRequest{Purge: purge}
	if opts != nil {
		body.EnforceIndex, body.CheckIndex = opts.EnforceIndex, opts.CheckIndex
	}
	var out GroupWriteResponse
	wm, err := g.c.write(http.MethodPost, groupPath(name, "stop"), nil, body, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Revert stores an earlier version's spec as the group's next version.
func (g *Groups) Revert(name string, version uint64, opts *GroupWriteOptions) (*GroupWriteResponse, *WriteMeta, error) {
	body := &groupRevertRequest{Version: version}
	if opts != nil {
		body.EnforceIndex, body.CheckIndex = opts.EnforceIndex, opts.CheckIndex
	}
	var out GroupWriteResponse
	wm, err := g.c.write(http.MethodPost, groupPath(name, "revert"), nil, body, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
