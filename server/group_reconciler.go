package server

import (
	"context"
	"fmt"
	"github.com/stratus-cloud/stratus/internal/retry"
	"sort"
	"strconv"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The group reconciler is the leader's loop that converges every
// instance group to its latest version. Like the lifecycle pass it
// decides from state alone and acts only through ordinary operations
// committed through Raft (Instance.Create, Instance.Delete,
// Instance.Task, Instance.Update), so a new leader simply carries on.
// It keeps in memory only what makes it patient: when each member was
// first seen healthy (min_healthy_time), and how often a slot or an
// operation failed (its retry back-off); a new leader starts these
// afresh, which only makes it wait longer.

// Timings of the group reconciler.
var (
	// groupReconcileInterval is how often the reconciler passes when
	// nothing wakes it; a change of the groups table wakes it at once.
	groupReconcileInterval = 500 * time.Millisecond
	// groupRetryBase and groupRetryMax bound the back-off of a slot or
	// an operation that failed.
	groupRetryBase = 2 * time.Second
	groupRetryMax  = 2 * time.Minute
)

// groupFailLimit is how many failures in a row of one slot or one
// update mark a deployment failed (the reconciler keeps retrying).
const groupFailLimit = 3

// retryState is the back-off of a slot or an operation.
type retryState struct {
	failures int
	next     time.Time
	last     string
}

// groupReconciler holds the reconciler's memory between passes.
type groupReconciler struct {
	s *Server
	// healthySince is when each member was first seen healthy.
	healthySince map[string]time.Time
	// slots are the back-offs of failing slots ("web/2"); ops those of
	// updates of members (by instance id).
	slots map[string]*retryState
	ops   map[string]*retryState
	now   time.Time
}

// startGroupReconciler starts the reconciler as a leader duty;
// revokeLeadership waits for it.
func (s *Server) startGroupReconciler(stopCh chan struct{}) {
	s.leaderWG.Add(1)
	go func() {
		defer s.leaderWG.Done()
		s.groupReconcilerLoop(stopCh)
	}()
}

// groupReconcilerLoop runs the reconciler until stopCh closes.
func (s *Server) groupReconcilerLoop(stopCh chan struct{}) {
	r := &groupReconciler{s: s, healthySince: map[string]time.Time{}, slots: map[string]*retryState{}, ops: map[string]*retryState{}}
	for {
		ws := memdb.NewWatchSet()
		if err := r.pass(ws, time.Now()); err != nil && !s.isShuttingDown() {
			s.logger.Warn("instance group reconcile pass failed", "error", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), groupReconcileInterval)
		go func() {
			select {
			case <-stopCh:
				cancel()
			case <-ctx.Done():
			}
		}()
		_ = ws.WatchCtx(ctx)
		cancel()
		select {
		case <-stopCh:
			return
		default:
		}
	}
}

// pass reconciles every group once.
func (r *groupReconciler) pass(ws memdb.WatchSet, now time.Time) error {
	r.now = now
	state := r.s.fsm.State()
	groups, err := state.InstanceGroups(ws)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	var errs []string
	var base *groupView
	if len(groups) > 0 {
		if base, err = readBaseView(state); err != nil {
			return err
		}
	}
	for _, g := range groups {
		members, err := state.InstancesByGroup(nil, g.Name)
		if err != nil {
			return err
		}
		for _, m := range members {
			live[m.ID] = true
		}
		if err := r.reconcile(state, base, g, members); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", g.Name, err))
		}
	}
	for id := range r.healthySince {
		if !live[id] {
			delete(r.healthySince, id)
		}
	}
	for key := range r.ops {
		id, _, _ := strings.Cut(key, "/")
		if !live[id] {
			delete(r.ops, key)
		}
	}
	for key := range r.slots {
		name := key[:strings.LastIndexByte(key, '/')]
		found := false
		for _, g := range groups {
			found = found || g.Name == name
		}
		if !found {
			delete(r.slots, key)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// backoff is the wait after the n-th failure in a row: none after the
// first, then doubling from groupRetryBase up to groupRetryMax.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return retry.Exponential(groupRetryBase, groupRetryMax, n-1)
}

func (r *groupReconciler) ready(m map[string]*retryState, key string) bool {
	st := m[key]
	return st == nil || !r.now.Before(st.next)
}

func (r *groupReconciler) failed(m map[string]*retryState, key, why string) *retryState {
	st := m[key]
	if st == nil {
		st = &retryState{}
		m[key] = st
	}
	st.failures++
	st.next, st.last = r.now.Add(backoff(st.failures)), why
	return st
}

func slotKey(group string, n int) string { return fmt.Sprintf("%s/%d", group, n) }

// reconcile converges one group: one pass of its steps, each of which
// notes what it could not do.
func (r *groupReconciler) reconcile(state *fsm.StateStore, base *groupView, g *structs.InstanceGroup, members []*structs.Instance) error {
	v, err := base.forGroup(state, g.Name)
	if err != nil {
		return err
	}
	if g.Stopped {
		return r.stop(state, g, v, members)
	}
	t, err := resolveGroupTarget(state, g.Spec)
	if err != nil {
		return r.record(g, &structs.GroupDeployment{Status: structs.DeploymentFailed, Description: structs.Message(err)})
	}
	t.Version, t.ServerGroupID = g.Version, g.ServerGroupID
	p := &groupPass{r: r, g: g, t: t, d: diffGroup(t, v, members), policy: g.Spec.UpdatePolicy()}
	p.deleteExtra()
	p.replaceFailed()
	p.createMissing()
	p.countBusy()
	p.settleResizes()
	p.applyMetadata()
	p.rollUpdates()
	r.cleanServerGroups(state, g, v)
	return r.record(g, r.progress(g, p.d, p.keepers, p.healthy, p.waiting, p.problems))
}

// progress summarises a group's convergence as its deployment.
func (r *groupReconciler) progress(g *structs.InstanceGroup, d *groupDiff, keepers map[int]*memberState, healthy func(*memberState) bool, waiting, problems []string) *structs.GroupDeployment {
	dep := &structs.GroupDeployment{Desired: g.Spec.Count}
	for n := 1; n <= g.Spec.Count; n++ {
		m := keepers[n]
		if m == nil {
			continue
		}
		dep.Placed++
		if m.inst.Status() == "ACTIVE" {
			dep.Running++
		}
		if m.failed || m.lost {
			dep.Failed++
		}
		if !(m.resize || m.rebuild || m.recreate || m.metadata) {
			dep.Updated++
			if healthy(m) {
				dep.Healthy++
			}
		}
	}
	extra := 0
	for _, m := range d.members {
		if m.slot == 0 || m.terminating {
			extra++
		}
	}
	var failures []string
	for n := 1; n <= g.Spec.Count; n++ {
		if st := r.slots[slotKey(g.Name, n)]; st != nil && st.failures >= groupFailLimit {
			failures = append(failures, st.last)
		}
		if m := keepers[n]; m != nil {
			// An update's first attempt is not a failure.
			if st := r.ops[m.inst.ID]; st != nil && st.failures > groupFailLimit {
				failures = append(failures, st.last)
			}
		}
	}
	sort.Strings(failures)
	switch {
	case dep.Healthy == g.Spec.Count && extra == 0:
		dep.Status, dep.Description = structs.DeploymentSuccessful, fmt.Sprintf("%d of %d members healthy", dep.Healthy, dep.Desired)
	case len(failures) > 0:
		dep.Status = structs.DeploymentFailed
		dep.Description = fmt.Sprintf("failed %d times in a row: %s; retrying", groupFailLimit, strings.Join(failures, "; "))
	default:
		dep.Status = structs.DeploymentRunning
		text := fmt.Sprintf("%d of %d members healthy", dep.Healthy, dep.Desired)
		if extra > 0 {
			text += fmt.Sprintf(", %d to delete", extra)
		}
		if len(waiting) > 0 {
			shown := waiting
			if len(shown) > 3 {
				shown = append(shown[:3:3], fmt.Sprintf("%d more", len(waiting)-3))
			}
			text += "; waiting for " + strings.Join(shown, ", ")
		}
		if len(problems) > 0 {
			text += "; " + problems[0]
		}
		dep.Description = text
	}
	return dep
}

func taskLabel(inst *structs.Instance) string {
	switch {
	case inst.Task != nil:
		return "its " + inst.Task.Kind
	case inst.TaskState != "":
		return inst.TaskState
	}
	return "building"
}

// stop deletes a stopped group's members and, once they are gone and
// the group is purged, the group itself.
func (r *groupReconciler) stop(state *fsm.StateStore, g *structs.InstanceGroup, v *groupView, members []*structs.Instance) error {
	var problems []string
	for _, inst := range members {
		// One being deleted by its agent is left to it, unless its host
		// went down: then it is purged.
		if terminating(inst) && onUpHost(v, inst) {
			continue
		}
		if err := r.delete(inst); err != nil {
			problems = append(problems, fmt.Sprintf("deleting %s: %v", inst.Name, err))
		}
	}
	if len(members) == 0 && g.Purge {
		var ids []string
		prefix := structs.ServerGroupPrefix(g.Name)
		for id, sg := range v.serverGroups {
			if strings.HasPrefix(sg.Name, prefix) {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		_, err := r.s.apply(structs.InstanceGroupDeleteType, &structs.InstanceGroupDeleteEntry{Name: g.Name, ServerGroupIDs: ids})
		if err == nil {
			r.s.logger.Info("instance group purged", "group", g.Name)
		}
		return err
	}
	dep := &structs.GroupDeployment{Status: structs.DeploymentStopping, Placed: len(members),
		Description: fmt.Sprintf("%d member(s) left to delete", len(members))}
	if len(members) == 0 {
		dep.Status, dep.Description = structs.DeploymentStopped, "every member deleted"
	}
	if len(problems) > 0 {
		dep.Description += "; " + problems[0]
	}
	return r.record(g, dep)
}

// record writes a group's deployment when its progress changed.
func (r *groupReconciler) record(g *structs.InstanceGroup, dep *structs.GroupDeployment) error {
	dep.Name, dep.Version = g.Name, g.Version
	cur, err := r.s.fsm.State().GroupDeployment(nil, g.Name)
	if err != nil {
		return err
	}
	if cur != nil && cur.Version == g.Version {
		dep.StartedAt = cur.StartedAt
	}
	if dep.SameProgress(cur) {
		return nil
	}
	dep.UpdatedAt = r.now.UnixNano()
	_, err = r.s.apply(structs.InstanceGroupDeploymentType, &structs.InstanceGroupDeploymentEntry{Deployment: dep})
	if structs.KindOf(err) == structs.KindConflict {
		return nil // a new version arrived meanwhile: the next pass records it
	}
	return err
}

// cleanServerGroups deletes the server groups made for earlier versions
// once no instance is in them.
func (r *groupReconciler) cleanServerGroups(state *fsm.StateStore, g *structs.InstanceGroup, v *groupView) {
	prefix := structs.ServerGroupPrefix(g.Name)
	for id, sg := range v.serverGroups {
		if id == g.ServerGroupID || !strings.HasPrefix(sg.Name, prefix) || len(sg.Members) > 0 {
			continue
		}
		// Only those of older versions: one made by a register newer
		// than g (read a moment earlier) is the group's next.
		n, err := strconv.ParseUint(strings.TrimPrefix(sg.Name, prefix+"v"), 10, 64)
		if err != nil || n >= g.Version {
			continue
		}
		var reply structs.GenericResponse
		if err := (&ServerGroup{srv: r.s}).Delete(&structs.ServerGroupDeleteRequest{GroupID: id}, &reply); err != nil && !r.s.isShuttingDown() {
			r.s.logger.Warn("deleting an instance group's old server group", "group", g.Name, "server_group", id, "error", err)
		}
	}
}

// create creates the member of slot n.
func (r *groupReconciler) create(g *structs.InstanceGroup, t *groupTarget, n int) error {
	spec := g.Spec
	req := &structs.InstanceCreateRequest{
		Name: structs.GroupMemberName(g.Name, n), FlavorID: t.Flavor.ID, ImageID: spec.Image, AZ: spec.AZ,
		KeyName: spec.KeyName, Metadata: spec.Metadata, Count: 1, InstanceGroup: g.Name, InstanceGroupVersion: g.Version,
		Constraints: spec.Constraints, UserData: spec.UserData, ImageAdmin: true,
	}
	if g.ServerGroupID != "" {
		req.Hints = &structs.SchedulerHints{Group: g.ServerGroupID}
	}
	nets, err := resolveGroupNetworks(r.s.fsm.State(), spec)
	if err != nil {
		return err
	}
	if nets != nil {
		req.NetworksMode, req.Networks = structs.NetworksList, nets
	}
	var reply structs.InstanceCreateResponse
	if err := (&Instance{srv: r.s}).Create(req, &reply); err != nil {
		return err
	}
	r.s.logger.Info("created instance group member", "group", g.Name, "member", req.Name, "version", g.Version)
	return nil
}

// delete deletes a member at once (never softly).
func (r *groupReconciler) delete(inst *structs.Instance) error {
	var reply structs.GenericResponse
	err := (&Instance{srv: r.s}).Delete(&structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}, Force: true, Admin: true}, &reply)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil
	}
	return err
}

// task starts an operation on a member as an admin.
func (r *groupReconciler) task(inst *structs.Instance, op string, tweak func(*structs.InstanceTaskRequest)) error {
	req := &structs.InstanceTaskRequest{InstanceID: inst.ID, Op: op, Admin: true}
	if tweak != nil {
		tweak(req)
	}
	var reply structs.InstanceTaskResponse
	return (&Instance{srv: r.s}).Task(req, &reply)
}

// updateMetadata replaces a member's metadata with the spec's.
func (r *groupReconciler) updateMetadata(inst *structs.Instance, md map[string]string) error {
	req := &structs.InstanceUpdateRequest{InstanceID: inst.ID, ReplaceMetadata: true, SetMetadata: md}
	var reply structs.InstanceUpdateResponse
	return (&Instance{srv: r.s}).Update(req, &reply)
}

func fieldNames(fields []*structs.FieldDiff) string {
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// onUpHost reports whether an instance has no host or one that is up.
func onUpHost(v *groupView, inst *structs.Instance) bool {
	if inst.HostID == "" {
		return true
	}
	h := v.hosts[inst.HostID]
	return h != nil && h.Up()
}
