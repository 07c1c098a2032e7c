package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The diff of an instance group: what each member needs to match a
// version of the group's spec. Plans show it and the reconciler acts on
// it, so both always agree. Everything here is a pure function of the
// state it is handed.

// newServerGroup stands for the server group a register would create.
const newServerGroup = "(new)"

// groupTarget is what a group's members should be: a spec with its
// references resolved.
type groupTarget struct {
	Spec    *structs.InstanceGroupSpec
	Version uint64
	Flavor  *structs.Flavor
	// ImageID is the image's id, or the spec's reference when the
	// region has no images to resolve it with.
	ImageID string
	// ImageProperties are the resolved image's properties.
	ImageProperties map[string]string
	// ServerGroupID is the placement's server group, "" for none,
	// newServerGroup for one a register would create.
	ServerGroupID string
	Stopped       bool
}

// groupView is the rest of the state a diff reads.
type groupView struct {
	hosts        map[string]*structs.Host
	versions     map[uint64]*structs.InstanceGroupVersion
	serverGroups map[string]*structs.ServerGroup
	imageNames   map[string]string
}

// memberState is one member and what it needs.
type memberState struct {
	inst *structs.Instance
	// slot is the member's place, 1..count; 0 for none.
	slot int
	// terminating members are being deleted already.
	terminating bool
	// lost members are on a host that is down; failed ones in ERROR.
	lost, failed bool
	action       string
	reason       string
	fields       []*structs.FieldDiff
	// What an update or replace does.
	resize, metadata, rebuild, recreate bool
}

// groupDiff is a group's members against a target.
type groupDiff struct {
	members []*memberState
	// missing are the slots with no member (a terminating one may still
	// hold the slot: see occupied).
	missing []int
	// occupied are the slots a terminating member still holds.
	occupied map[int]bool
}

// memberSlot is the slot of a member named group-N, 0 for another name.
func memberSlot(group, name string) int {
	rest, ok := strings.CutPrefix(name, group+"-")
	if !ok || rest == "" || rest[0] == '0' {
		return 0
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// terminating reports whether an instance is on its way out.
func terminating(inst *structs.Instance) bool {
	return inst.TaskState == structs.TaskDeleting || inst.TaskState == structs.TaskSoftDeleting ||
		inst.VMState == structs.VMStateSoftDeleted || inst.VMState == structs.VMStateDeleted
}

// diffGroup works out what every member of a group needs to match t.
func diffGroup(t *groupTarget, v *groupView, members []*structs.Instance) *groupDiff {
	d := &groupDiff{occupied: map[int]bool{}}
	count := t.Spec.Count
	if t.Stopped {
		count = 0
	}
	bySlot := map[int][]*memberState{}
	for _, inst := range members {
		m := &memberState{inst: inst, action: structs.PlanNone}
		d.members = append(d.members, m)
		if inst.HostID != "" {
			if h := v.hosts[inst.HostID]; h == nil || !h.Up() {
				m.lost = true
			}
		}
		if terminating(inst) {
			m.terminating = true
			if n := memberSlot(t.Spec.Name, inst.Name); n >= 1 && n <= count {
				d.occupied[n] = true
			}
			continue
		}
		m.failed = inst.VMState == structs.VMStateError && inst.Stable()
		n := memberSlot(t.Spec.Name, inst.Name)
		switch {
		case t.Stopped:
			m.action, m.reason = structs.PlanDestroy, "the group is stopped"
		case n == 0:
			m.action, m.reason = structs.PlanDestroy, "its name is not one of the group's"
		case n > count:
			m.action, m.reason = structs.PlanDestroy, fmt.Sprintf("count lowered to %d", count)
		default:
			m.slot = n
			bySlot[n] = append(bySlot[n], m)
		}
	}
	for n := 1; n <= count; n++ {
		cands := bySlot[n]
		if len(cands) == 0 {
			d.missing = append(d.missing, n)
			continue
		}
		// Keep the healthiest, newest member of the slot.
		sort.SliceStable(cands, func(i, j int) bool {
			bi, bj := cands[i].lost || cands[i].failed, cands[j].lost || cands[j].failed
			if bi != bj {
				return !bi
			}
			return cands[i].inst.CreateIndex > cands[j].inst.CreateIndex
		})
		for _, extra := range cands[1:] {
			extra.slot, extra.action, extra.reason = 0, structs.PlanDestroy, fmt.Sprintf("another member holds slot %d", n)
		}
		m := cands[0]
		switch {
		case m.lost:
			m.action, m.recreate = structs.PlanReplace, true
			m.reason = "its host " + hostLabel(v, m.inst.HostID) + " is down"
		case m.failed:
			m.action, m.recreate = structs.PlanReplace, true
			m.reason = "it is in ERROR"
			if m.inst.Fault != nil && m.inst.Fault.Message != "" {
				m.reason += ": " + m.inst.Fault.Message
			}
		default:
			m.fields = memberFields(t, v, m.inst)
			for _, f := range m.fields {
				switch f.Effect {
				case structs.EffectResize:
					m.resize = true
				case structs.EffectInPlace:
					m.metadata = true
				case structs.EffectRebuild:
					m.rebuild = true
				case structs.EffectRecreate:
					m.recreate = true
				}
			}
			switch {
			case m.recreate || m.rebuild:
				m.action = structs.PlanReplace
			case m.resize || m.metadata:
				m.action = structs.PlanUpdate
			}
		}
	}
	return d
}

func hostLabel(v *groupView, id string) string {
	if h := v.hosts[id]; h != nil && h.Name != "" {
		return h.Name
	}
	return id
}

// memberFields compares a member with the target, field by field.
func memberFields(t *groupTarget, v *groupView, inst *structs.Instance) []*structs.FieldDiff {
	var out []*structs.FieldDiff
	add := func(name, old, new, effect string) {
		typ := structs.DiffEdited
		switch {
		case old == "":
			typ = structs.DiffAdded
		case new == "":
			typ = structs.DiffDeleted
		}
		out = append(out, &structs.FieldDiff{Name: name, Type: typ, Old: old, New: new, Effect: effect})
	}
	spec := t.Spec
	if t.Flavor != nil && (inst.Flavor == nil || inst.Flavor.ID != t.Flavor.ID) {
		effect := structs.EffectResize
		if inst.Flavor != nil && t.Flavor.RootGB < inst.Flavor.RootGB {
			effect = structs.EffectRecreate // a root disk cannot shrink
		}
		add("flavor", instFlavorName(inst), t.Flavor.Name, effect)
	}
	// A member created before the region had images records the spec's
	// reference itself; that is the same image.
	if inst.ImageID != t.ImageID && inst.ImageID != spec.Image {
		old := inst.ImageID
		if n := v.imageNames[old]; n != "" {
			old = n
		}
		add("image", old, spec.Image, structs.EffectRebuild)
	}
	// No zone in the spec means any zone: the one a member was placed in
	// is as good as another.
	if spec.AZ != "" && inst.AZ != spec.AZ {
		add("availability_zone", inst.AZ, spec.AZ, structs.EffectRecreate)
	}
	if inst.KeyName != spec.KeyName {
		add("key_name", inst.KeyName, spec.KeyName, structs.EffectRecreate)
	}
	if inst.UserData != spec.UserData {
		add("user_data", userDataLabel(inst.UserData), userDataLabel(spec.UserData), structs.EffectRecreate)
	}
	if a, b := structs.ConstraintsString(inst.Constraints), structs.ConstraintsString(spec.Constraints); a != b {
		add("constraint", a, b, structs.EffectRecreate)
	}
	if inst.ServerGroupID != t.ServerGroupID {
		add("placement", placementLabel(v, inst.ServerGroupID), specPlacementLabel(spec.Placement), structs.EffectRecreate)
	}
	if ver := v.versions[inst.InstanceGroupVersion]; ver != nil && ver.Spec != nil {
		if a, b := networksLabel(ver.Spec.Networks), networksLabel(spec.Networks); a != b {
			add("network", a, b, structs.EffectRecreate)
		}
	}
	out = append(out, mapDiff("metadata", inst.Metadata, spec.Metadata, structs.EffectInPlace)...)
	return out
}

func instFlavorName(inst *structs.Instance) string {
	if inst.Flavor != nil && inst.Flavor.Name != "" {
		return inst.Flavor.Name
	}
	return inst.FlavorID
}

// mapDiff compares two maps key by key, as name[key].
func mapDiff(name string, old, new map[string]string, effect string) []*structs.FieldDiff {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []*structs.FieldDiff
	for _, k := range sorted {
		o, inOld := old[k]
		n, inNew := new[k]
		f := &structs.FieldDiff{Name: name + "[" + k + "]", Old: o, New: n, Effect: effect}
		switch {
		case inOld && !inNew:
			f.Type = structs.DiffDeleted
		case !inOld && inNew:
			f.Type = structs.DiffAdded
		case o != n:
			f.Type = structs.DiffEdited
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// userDataLabel shows user data by size and digest, never its content.
func userDataLabel(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("<%d bytes, sha256 %s>", len(s), hex.EncodeToString(sum[:4]))
}

func placementLabel(v *groupView, sgID string) string {
	switch sgID {
	case "":
		return ""
	case newServerGroup:
		return "a new server group"
	}
	if g := v.serverGroups[sgID]; g != nil {
		return serverGroupPolicyLabel(g.Policy, g.MaxServerPerHost)
	}
	return "server group " + sgID
}

func specPlacementLabel(p *structs.GroupPlacement) string {
	if p == nil {
		return ""
	}
	return serverGroupPolicyLabel(p.Policy, p.MaxPerHost)
}

func serverGroupPolicyLabel(policy string, max int) string {
	if max > 0 {
		return fmt.Sprintf("%s (max %d per host)", policy, max)
	}
	return policy
}

func networksLabel(list []*structs.GroupNetwork) string {
	parts := make([]string, 0, len(list))
	for _, n := range list {
		p := n.Name
		if n.FixedIP != "" {
			p += " (" + n.FixedIP + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// specFields compares two versions of a spec, field by field, as the
// spec spells them. old may be nil (a new group).
func specFields(old, new *structs.InstanceGroupSpec) []*structs.FieldDiff {
	isNew := old == nil
	if isNew {
		old = &structs.InstanceGroupSpec{}
	}
	var out []*structs.FieldDiff
	str := func(name, a, b, effect string) {
		if a == b {
			return
		}
		if isNew {
			effect = structs.EffectNone // nothing to change in place
		}
		typ := structs.DiffEdited
		switch {
		case a == "":
			typ = structs.DiffAdded
		case b == "":
			typ = structs.DiffDeleted
		}
		out = append(out, &structs.FieldDiff{Name: name, Type: typ, Old: a, New: b, Effect: effect})
	}
	num := func(n int) string {
		return strconv.Itoa(n)
	}
	if old.Count != new.Count || isNew {
		f := &structs.FieldDiff{Name: "count", Type: structs.DiffEdited, Old: num(old.Count), New: num(new.Count)}
		if isNew {
			f.Type, f.Old = structs.DiffAdded, ""
		}
		out = append(out, f)
	}
	str("flavor", old.Flavor, new.Flavor, structs.EffectResize)
	str("image", old.Image, new.Image, structs.EffectRebuild)
	str("availability_zone", old.AZ, new.AZ, structs.EffectRecreate)
	str("key_name", old.KeyName, new.KeyName, structs.EffectRecreate)
	metaEffect := structs.EffectInPlace
	if isNew {
		metaEffect = structs.EffectNone
	}
	out = append(out, mapDiff("metadata", old.Metadata, new.Metadata, metaEffect)...)
	str("user_data", userDataLabel(old.UserData), userDataLabel(new.UserData), structs.EffectRecreate)
	str("network", networksLabel(old.Networks), networksLabel(new.Networks), structs.EffectRecreate)
	str("placement", specPlacementLabel(old.Placement), specPlacementLabel(new.Placement), structs.EffectRecreate)
	str("constraint", structs.ConstraintsString(old.Constraints), structs.ConstraintsString(new.Constraints), structs.EffectRecreate)
	ou, nu := old.UpdatePolicy(), new.UpdatePolicy()
	if isNew {
		ou = nu
	}
	str("update.max_parallel", num(ou.MaxParallel), num(nu.MaxParallel), structs.EffectNone)
	str("update.health_check", ou.HealthCheck, nu.HealthCheck, structs.EffectNone)
	str("update.min_healthy_time", ou.MinHealthyTime.String(), nu.MinHealthyTime.String(), structs.EffectNone)
	return out
}

// instanceDiffs turns a diff into the plan's per-member changes, by
// slot, then the members to destroy by name.
func (d *groupDiff) instanceDiffs(t *groupTarget) []*structs.InstanceDiff {
	var out, destroy []*structs.InstanceDiff
	bySlot := map[int]*structs.InstanceDiff{}
	for _, m := range d.members {
		if m.terminating {
			continue
		}
		id := &structs.InstanceDiff{Name: m.inst.Name, ID: m.inst.ID, Action: m.action, Reason: m.reason, Fields: m.fields}
		if m.action == structs.PlanDestroy {
			destroy = append(destroy, id)
			continue
		}
		bySlot[m.slot] = id
	}
	for _, n := range d.missing {
		bySlot[n] = &structs.InstanceDiff{Name: structs.GroupMemberName(t.Spec.Name, n), Action: structs.PlanCreate}
	}
	slots := make([]int, 0, len(bySlot))
	for n := range bySlot {
		slots = append(slots, n)
	}
	sort.Ints(slots)
	for _, n := range slots {
		out = append(out, bySlot[n])
	}
	sort.SliceStable(destroy, func(i, j int) bool {
		si, sj := memberSlot(t.Spec.Name, destroy[i].Name), memberSlot(t.Spec.Name, destroy[j].Name)
		if si != sj {
			return si < sj
		}
		return destroy[i].Name < destroy[j].Name
	})
	return append(out, destroy...)
}

// resolveGroupTarget resolves a spec's flavor and image against the
// state, as a create would.
func resolveGroupTarget(state *fsm.StateStore, spec *structs.InstanceGroupSpec) (*groupTarget, error) {
	flavor, err := state.FlavorByIDOrName(nil, spec.Flavor)
	if err != nil {
		return nil, err
	}
	if flavor == nil {
		return nil, structs.Errorf(structs.KindInvalid, "instance group %q: flavor %q not found", spec.Name, spec.Flavor)
	}
	if flavor.Disabled {
		return nil, structs.Errorf(structs.KindInvalid, "instance group %q: flavor %q is disabled", spec.Name, flavor.Name)
	}
	t := &groupTarget{Spec: spec, Flavor: flavor, ImageID: spec.Image}
	img, ok, err := resolveImage(state, spec.Image, structs.ImageAccess{Admin: true}, flavor)
	if err != nil {
		return nil, fmt.Errorf("instance group %q: %w", spec.Name, err)
	}
	if ok && img != nil {
		t.ImageID, t.ImageProperties = img.ID, img.Properties
	}
	return t, nil
}

// readGroupView reads what a diff of group name needs.
func readGroupView(state *fsm.StateStore, name string) (*groupView, error) {
	base, err := readBaseView(state)
	if err != nil {
		return nil, err
	}
	return base.forGroup(state, name)
}

// readBaseView reads the part of a view every group shares: hosts,
// server groups and image names.
func readBaseView(state *fsm.StateStore) (*groupView, error) {
	v := &groupView{hosts: map[string]*structs.Host{}, serverGroups: map[string]*structs.ServerGroup{}, imageNames: map[string]string{}}
	hosts, err := state.Hosts(nil)
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		v.hosts[h.ID] = h
	}
	groups, err := state.ServerGroups(nil, "")
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		v.serverGroups[g.ID] = g
	}
	images, err := state.Images(nil)
	if err != nil {
		return nil, err
	}
	for _, img := range images {
		v.imageNames[img.ID] = img.Name
	}
	return v, nil
}

// forGroup returns a copy of a base view with the versions of group
// name.
func (v *groupView) forGroup(state *fsm.StateStore, name string) (*groupView, error) {
	c := *v
	c.versions = map[uint64]*structs.InstanceGroupVersion{}
	versions, err := state.InstanceGroupVersions(nil, name)
	if err != nil {
		return nil, err
	}
	for _, ver := range versions {
		c.versions[ver.Version] = ver
	}
	return &c, nil
}

// placementServerGroup is the server group a register of spec would
// use: the group's current one when its policy is the same, else a new
// one (newServerGroup); "" without placement.
func placementServerGroup(state *fsm.StateStore, g *structs.InstanceGroup, spec *structs.InstanceGroupSpec) (string, error) {
	p := spec.Placement
	if p == nil {
		return "", nil
	}
	if g == nil || g.ServerGroupID == "" {
		return newServerGroup, nil
	}
	sg, err := state.ServerGroupByID(nil, g.ServerGroupID)
	if err != nil {
		return "", err
	}
	if sg == nil || sg.Policy != p.Policy || sg.MaxServerPerHost != p.MaxPerHost {
		return newServerGroup, nil
	}
	return sg.ID, nil
}

// planGroup computes what registering spec (canonical, valid) would do.
func planGroup(state *fsm.StateStore, spec *structs.InstanceGroupSpec) (*structs.GroupPlan, error) {
	g, err := state.InstanceGroupByName(nil, spec.Name)
	if err != nil {
		return nil, err
	}
	t, err := resolveGroupTarget(state, spec)
	if err != nil {
		return nil, err
	}
	if t.ServerGroupID, err = placementServerGroup(state, g, spec); err != nil {
		return nil, err
	}
	v, err := readGroupView(state, spec.Name)
	if err != nil {
		return nil, err
	}
	members, err := state.InstancesByGroup(nil, spec.Name)
	if err != nil {
		return nil, err
	}
	plan := &structs.GroupPlan{Name: spec.Name}
	var old *structs.InstanceGroupSpec
	if g != nil {
		plan.Exists, plan.CurrentVersion, plan.Stopped, plan.CheckIndex = true, g.Version, g.Stopped, g.ModifyIndex
		old = g.Spec
	}
	plan.Fields = specFields(old, spec)
	plan.SpecChanged = g == nil || g.Stopped || !g.Spec.Equal(spec)
	d := diffGroup(t, v, members)
	plan.Instances = d.instanceDiffs(t)
	for _, id := range plan.Instances {
		switch id.Action {
		case structs.PlanCreate:
			plan.Summary.Create++
		case structs.PlanUpdate:
			plan.Summary.Update++
		case structs.PlanReplace:
			plan.Summary.Replace++
		case structs.PlanDestroy:
			plan.Summary.Destroy++
		default:
			plan.Summary.Unchanged++
		}
	}
	if spec.AZ != "" {
		if ok, err := zoneExists(state, spec.AZ); err != nil {
			return nil, err
		} else if !ok {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("availability zone %q has no hosts: members cannot be created until it has", spec.AZ))
		}
	}
	if _, err := resolveGroupNetworks(state, spec); err != nil {
		plan.Warnings = append(plan.Warnings, structs.Message(err)+": members cannot be created until it exists")
	}
	return plan, nil
}

// resolveGroupNetworks turns a spec's network blocks (by name or id)
// into a create's network requests; nil when the spec has none.
func resolveGroupNetworks(state *fsm.StateStore, spec *structs.InstanceGroupSpec) ([]*structs.InstanceNetworkRequest, error) {
	if len(spec.Networks) == 0 {
		return nil, nil
	}
	nets, err := state.Networks(nil)
	if err != nil {
		return nil, err
	}
	var out []*structs.InstanceNetworkRequest
	for _, want := range spec.Networks {
		var match []*structs.Network
		for _, n := range nets {
			if n.ID == want.Name || n.Name == want.Name {
				match = append(match, n)
			}
		}
		switch len(match) {
		case 0:
			return nil, structs.Errorf(structs.KindInvalid, "network %q not found", want.Name)
		case 1:
		default:
			return nil, structs.Errorf(structs.KindInvalid, "%d networks are named %q; use the network's id", len(match), want.Name)
		}
		out = append(out, &structs.InstanceNetworkRequest{NetworkID: match[0].ID, FixedIP: want.FixedIP})
	}
	return out, nil
}
