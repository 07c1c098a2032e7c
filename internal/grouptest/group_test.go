package grouptest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// webSpec is the spec the tests start from; -var count and flavor change
// it.
const webSpec = `
variable "count" {
  type    = number
  default = 3
}
variable "flavor" {
  default = "m1.tiny"
}
variable "image" {
  default = "cirros"
}
variable "role" {
  default = "web"
}

instance "web" {
  count    = var.count
  flavor   = var.flavor
  image    = var.image
  metadata = { role = var.role }
  update {
    max_parallel     = 1
    min_healthy_time = "500ms"
  }
}
`

// TestRunConvergesAndScales runs a spec on a three-server cluster, then
// scales it up and down: members are created and deleted by slot.
func TestRunConvergesAndScales(t *testing.T) {
	t.Parallel()
	c := newCloud(t, 3, "hv1", "hv2", "hv3")
	r := c.register(c.parse(webSpec))
	if r.Version != 1 || !r.Changed {
		t.Fatalf("register: %+v", r)
	}
	g := c.waitDeployed("web", 1)
	if got := names(g.Members); !reflect.DeepEqual(got, []string{"web-1", "web-2", "web-3"}) {
		t.Fatalf("members %v", got)
	}
	for _, m := range g.Members {
		if m.InstanceGroup != "web" || m.InstanceGroupVersion != 1 || m.Metadata["role"] != "web" || m.Flavor.Name != "m1.tiny" {
			t.Errorf("member %s: group %q v%d metadata %v flavor %s", m.Name, m.InstanceGroup, m.InstanceGroupVersion, m.Metadata, m.Flavor.Name)
		}
	}
	d := g.Deployment
	if d.Desired != 3 || d.Placed != 3 || d.Running != 3 || d.Healthy != 3 || d.Failed != 0 {
		t.Errorf("deployment %+v", d)
	}

	// The same spec again stores nothing.
	if again := c.register(c.parse(webSpec)); again.Changed || again.Version != 1 {
		t.Fatalf("re-register: %+v", again)
	}

	before := ids(g.Members)
	c.register(c.parse(webSpec, "count=5"))
	g = c.waitDeployed("web", 2)
	if got := names(g.Members); !reflect.DeepEqual(got, []string{"web-1", "web-2", "web-3", "web-4", "web-5"}) {
		t.Fatalf("scaled up to %v", got)
	}
	for name, id := range before {
		if ids(g.Members)[name] != id {
			t.Errorf("scaling up replaced %s", name)
		}
	}
	c.register(c.parse(webSpec, "count=2"))
	g = c.waitDeployed("web", 3)
	if got := names(g.Members); !reflect.DeepEqual(got, []string{"web-1", "web-2"}) {
		t.Fatalf("scaled down to %v", got)
	}
	if ids(g.Members)["web-1"] != before["web-1"] || ids(g.Members)["web-2"] != before["web-2"] {
		t.Errorf("scaling down replaced the members it kept")
	}
	// The versions are kept, newest first, each with its change.
	var vs structs.InstanceGroupVersionsResponse
	c.must("InstanceGroup.Versions", &structs.InstanceGroupSpecificRequest{Name: "web"}, &vs)
	if len(vs.Versions) != 3 || vs.Versions[0].Version != 3 || vs.Versions[2].Spec.Count != 3 {
		t.Fatalf("versions %+v", vs.Versions)
	}
	if d := vs.Diffs[3]; len(d) != 1 || d[0].Name != "count" || d[0].Old != "5" || d[0].New != "2" {
		t.Errorf("diff of version 3: %+v", d)
	}
}

// TestRollingFlavorUpdate changes the flavor: the members are resized in
// place one at a time, never more than max_parallel of them busy at once.
func TestRollingFlavorUpdate(t *testing.T) {
	t.Parallel()
	c := newCloud(t, 3, "hv1", "hv2", "hv3")
	c.register(c.parse(webSpec))
	g := c.waitDeployed("web", 1)
	before := ids(g.Members)

	// A plan says what will happen, member by member.
	var plan structs.InstanceGroupPlanResponse
	c.must("InstanceGroup.Plan", &structs.InstanceGroupPlanRequest{Spec: c.parse(webSpec, "flavor=m1.small", "role=frontend")}, &plan)
	p := plan.Plan
	if !p.Changes() || p.Summary.Update != 3 || p.Summary.Create+p.Summary.Replace+p.Summary.Destroy != 0 || p.CheckIndex == 0 {
		t.Fatalf("plan %+v", p)
	}
	for _, d := range p.Instances {
		var fields []string
		for _, f := range d.Fields {
			fields = append(fields, f.Name+":"+f.Effect)
		}
		if d.Action != structs.PlanUpdate || strings.Join(fields, ",") != "flavor:resize,metadata[role]:in-place" {
			t.Errorf("plan of %s: %s %v", d.Name, d.Action, fields)
		}
	}

	w := c.watch("web")
	var r structs.InstanceGroupRegisterResponse
	c.must("InstanceGroup.Register", &structs.InstanceGroupRegisterRequest{Spec: c.parse(webSpec, "flavor=m1.small", "role=frontend"),
		EnforceIndex: true, CheckIndex: p.CheckIndex}, &r)
	g = c.waitDeployed("web", 2)
	maxBusy, worst, snapshots := w.stop()
	if maxBusy > 1 {
		t.Errorf("%d members were busy at once (max_parallel 1): %s", maxBusy, worst)
	}
	if maxBusy == 0 || snapshots < 5 {
		t.Errorf("the watcher saw no update (%d snapshots)", snapshots)
	}
	for _, m := range g.Members {
		if m.ID != before[m.Name] {
			t.Errorf("%s was replaced, not resized", m.Name)
		}
		if m.Flavor.Name != "m1.small" || m.Metadata["role"] != "frontend" || m.Status() != "ACTIVE" {
			t.Errorf("%s: flavor %s metadata %v status %s", m.Name, m.Flavor.Name, m.Metadata, m.Status())
		}
	}
	// The resizes did not overlap: each began after the one before ended.
	type span struct{ start, end int64 }
	var spans []span
	for _, m := range g.Members {
		var acts structs.InstanceActionListResponse
		c.must("Instance.Actions", &structs.InstanceActionListRequest{InstanceID: m.ID}, &acts)
		var s span
		for _, a := range acts.Actions {
			switch a.Action {
			case "resize":
				s.start = a.StartTime
			case "confirmResize":
				s.end = a.UpdatedAt
			}
		}
		if s.start == 0 || s.end == 0 {
			t.Fatalf("%s: no resize and confirm in %d actions", m.Name, len(acts.Actions))
		}
		spans = append(spans, s)
	}
	for i := range spans {
		for j := range spans {
			if i != j && spans[i].start < spans[j].start && spans[j].start < spans[i].end {
				t.Errorf("resizes overlap: %+v and %+v", spans[i], spans[j])
			}
		}
	}

	// The check index of the old plan is stale now.
	err := c.rpc("InstanceGroup.Register", &structs.InstanceGroupRegisterRequest{Spec: c.parse(webSpec, "count=1"),
		EnforceIndex: true, CheckIndex: p.CheckIndex}, &r)
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("stale check index: %v", err)
	}
}

// TestImageChangeRebuildsAndRevert changes the image (a rebuild that
// keeps each member) and reverts to the first version.
func TestImageChangeRebuildsAndRevert(t *testing.T) {
	t.Parallel()
	c := newCloud(t, 3, "hv1", "hv2")
	c.register(c.parse(webSpec, "count=2"))
	before := ids(c.waitDeployed("web", 1).Members)
	c.register(c.parse(webSpec, "count=2", "image=debian-12"))
	g := c.waitDeployed("web", 2)
	for _, m := range g.Members {
		if m.ID != before[m.Name] || m.ImageID != "debian-12" {
			t.Errorf("%s: id %s (was %s) image %s", m.Name, m.ID, before[m.Name], m.ImageID)
		}
	}
	var r structs.InstanceGroupRegisterResponse
	c.must("InstanceGroup.Revert", &structs.InstanceGroupRevertRequest{Name: "web", Version: 1}, &r)
	if r.Version != 3 || !r.Changed {
		t.Fatalf("revert: %+v", r)
	}
	g = c.waitDeployed("web", 3)
	for _, m := range g.Members {
		if m.ImageID != "cirros" {
			t.Errorf("%s: image %s after the revert", m.Name, m.ImageID)
		}
	}
	var vs structs.InstanceGroupVersionsResponse
	c.must("InstanceGroup.Versions", &structs.InstanceGroupSpecificRequest{Name: "web"}, &vs)
	if vs.Versions[0].RevertedFrom != 1 {
		t.Errorf("version 3 does not say it reverted to 1: %+v", vs.Versions[0])
	}
}

// TestLostHostMemberIsReplaced kills the host of a member: the member is
// deleted and created again on a host that is up.
func TestLostHostMemberIsReplaced(t *testing.T) {
	t.Parallel()
	c := newCloud(t, 3, "hv1", "hv2", "hv3", "hv4")
	c.register(c.parse(webSpec))
	g := c.waitDeployed("web", 1)
	hosts := c.hostNames()
	victim := g.Members[0]
	dead := hosts[victim.HostID]
	c.killHost(dead)
	c.waitFor("the lost member replaced", func() error {
		g = c.group("web")
		for _, m := range g.Members {
			if m.ID == victim.ID {
				return fmt.Errorf("%s still there on %s (%s)", m.Name, dead, describe(g.Members))
			}
		}
		if g.Deployment.Status != structs.DeploymentSuccessful || len(g.Members) != 3 {
			return fmt.Errorf("deployment %s: %s (%s)", g.Deployment.Status, g.Deployment.Description, describe(g.Members))
		}
		for _, m := range g.Members {
			if m.Status() != "ACTIVE" {
				return fmt.Errorf("%s is %s", m.Name, m.Status())
			}
		}
		return nil
	})
	if got := names(g.Members); !reflect.DeepEqual(got, []string{"web-1", "web-2", "web-3"}) {
		t.Fatalf("members %v", got)
	}
	for _, m := range g.Members {
		if hosts[m.HostID] == dead {
			t.Errorf("%s is on the dead host %s", m.Name, dead)
		}
		if m.Status() != "ACTIVE" {
			t.Errorf("%s is %s", m.Name, m.Status())
		}
	}
}

// TestPlacementConstraintsStopAndPurge runs a spec with anti-affinity and
// a constraint, then stops and purges it: the members, the group and its
// server group go.
func TestPlacementConstraintsStopAndPurge(t *testing.T) {
	t.Parallel()
	c := newCloud(t, 3, "hv1", "hv2", "hv3", "gpu1")
	src := `
instance "db" {
  count  = 3
  flavor = "m1.tiny"
  image  = "cirros"
  placement {
    policy = "anti-affinity"
  }
  constraint {
    attribute = "host.name"
    operator  = "regexp"
    value     = "^hv[0-9]+$"
  }
  update {
    min_healthy_time = "0s"
  }
}
`
	c.register(c.parse(src))
	g := c.waitDeployed("db", 1)
	hosts := c.hostNames()
	seen := map[string]bool{}
	for _, m := range g.Members {
		h := hosts[m.HostID]
		if seen[h] || !strings.HasPrefix(h, "hv") {
			t.Errorf("%s on %s (members %v)", m.Name, h, seen)
		}
		seen[h] = true
		if m.ServerGroupID == "" || m.ServerGroupID != g.Group.ServerGroupID || len(m.Constraints) != 1 {
			t.Errorf("%s: server group %q (group's %q), constraints %v", m.Name, m.ServerGroupID, g.Group.ServerGroupID, m.Constraints)
		}
	}
	var sg structs.SingleServerGroupResponse
	c.must("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.Group.ServerGroupID}, &sg)
	if sg.Group.Policy != structs.PolicyAntiAffinity || sg.Group.Name != "instance-group/db/v1" || len(sg.Group.Members) != 3 {
		t.Fatalf("server group %+v", sg.Group)
	}

	// A fourth member has no host left to go to.
	var plan structs.InstanceGroupPlanResponse
	c.must("InstanceGroup.Plan", &structs.InstanceGroupPlanRequest{Spec: c.parse(strings.Replace(src, "count  = 3", "count  = 4", 1))}, &plan)
	if plan.Plan.Summary.Create != 1 || plan.Plan.Summary.Unchanged != 3 {
		t.Fatalf("plan %+v", plan.Plan.Summary)
	}

	// Another policy makes another server group: the members are created
	// again in it, and the old one goes once empty.
	c.register(c.parse(strings.Replace(src, `policy = "anti-affinity"`, `policy = "soft-anti-affinity"`, 1)))
	g2 := c.waitDeployed("db", 2)
	if g2.Group.ServerGroupID == g.Group.ServerGroupID {
		t.Fatalf("the policy changed but the server group did not")
	}
	for _, m := range g2.Members {
		if m.ServerGroupID != g2.Group.ServerGroupID || m.InstanceGroupVersion != 2 {
			t.Errorf("%s: server group %s, version %d", m.Name, m.ServerGroupID, m.InstanceGroupVersion)
		}
	}
	c.waitFor("the old server group deleted", func() error {
		var old structs.SingleServerGroupResponse
		if err := c.rpc("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.Group.ServerGroupID}, &old); structs.KindOf(err) != structs.KindNotFound {
			return fmt.Errorf("still there: %v %+v", err, old.Group)
		}
		return nil
	})
	g = g2

	var r structs.InstanceGroupRegisterResponse
	c.must("InstanceGroup.Stop", &structs.InstanceGroupStopRequest{Name: "db", Purge: true}, &r)
	c.waitFor("db purged", func() error {
		if g := c.group("db"); g != nil {
			var hs []string
			for _, h := range c.hosts() {
				hs = append(hs, h.Name+"="+h.Status)
			}
			return fmt.Errorf("still there: %s %s (hosts %v)", g.Deployment.Status, describe(g.Members), hs)
		}
		return nil
	})
	var insts structs.InstanceListResponse
	c.must("Instance.List", &structs.InstanceListRequest{}, &insts)
	if len(insts.Instances) != 0 {
		t.Errorf("instances left: %s", describe(insts.Instances))
	}
	err := c.rpc("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.Group.ServerGroupID}, &sg)
	if structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("server group after the purge: %v %+v", err, sg.Group)
	}
}
