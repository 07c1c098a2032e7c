package server

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the tests that have them")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// planFixture is a state with flavors, two hosts (h2 down) and the group
// "web" at version 1 with three members.
type planFixture struct {
	t     *testing.T
	s     *fsm.StateStore
	index uint64
}

func newPlanFixture(t *testing.T) *planFixture {
	s, err := fsm.NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	f := &planFixture{t: t, s: s, index: 1}
	f.must(s.UpsertFlavors(f.next(), structs.DevFlavors()))
	f.must(s.UpsertHost(f.next(), &structs.Host{ID: "h1", Name: "cmp-1", Status: structs.HostStatusUp, Enabled: true, AZ: "nova"}))
	f.must(s.UpsertHost(f.next(), &structs.Host{ID: "h2", Name: "cmp-2", Status: structs.HostStatusDown, Enabled: true, AZ: "nova"}))
	spec := baseSpec()
	spec.Canonicalize()
	f.must(s.RegisterInstanceGroup(f.next(), &structs.InstanceGroupRegisterEntry{Spec: spec, SubmitTime: 1}))
	tiny, _ := s.FlavorByIDOrName(nil, "m1.tiny")
	for i, id := range []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"} {
		f.must(s.UpsertInstance(f.next(), &structs.Instance{ID: id, Name: structs.GroupMemberName("web", i+1), FlavorID: tiny.ID, Flavor: tiny,
			ImageID: "cirros", AZ: "nova", HostID: "h1", VMState: structs.VMStateActive, PowerState: structs.PowerRunning,
			Metadata: map[string]string{"role": "web"}, InstanceGroup: "web", InstanceGroupVersion: 1}))
	}
	return f
}

func (f *planFixture) next() uint64 { f.index++; return f.index }

func (f *planFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *planFixture) member(n int, change func(*structs.Instance)) {
	list, _ := f.s.InstancesByGroup(nil, "web")
	for _, inst := range list {
		if inst.Name == structs.GroupMemberName("web", n) {
			c := inst.Copy()
			change(c)
			f.must(f.s.UpsertInstance(f.next(), c))
		}
	}
}

func baseSpec() *structs.InstanceGroupSpec {
	return &structs.InstanceGroupSpec{Name: "web", Count: 3, Flavor: "m1.tiny", Image: "cirros", Metadata: map[string]string{"role": "web"}}
}

// TestGroupPlans checks the plans of typical changes against golden
// files: the diff every client shows comes from here.
func TestGroupPlans(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *planFixture)
		spec  func(s *structs.InstanceGroupSpec)
	}{
		{"new_group", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) { s.Name = "api"; s.KeyName = "ops" }},
		{"unchanged", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) {}},
		{"resize_and_metadata", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) {
			s.Flavor = "m1.small"
			s.Metadata = map[string]string{"role": "frontend", "tier": "1"}
		}},
		{"rebuild_and_scale_up", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) {
			s.Image, s.Count = "debian-12", 4
			s.Update = &structs.GroupUpdate{MaxParallel: 2, HealthCheck: structs.GroupHealthActive, MinHealthyTime: 30e9}
		}},
		{"scale_down_failed_and_lost", func(f *planFixture) {
			f.member(1, func(i *structs.Instance) {
				i.VMState, i.Fault = structs.VMStateError, &structs.Fault{Code: 500, Message: "spawn failed"}
			})
			f.member(2, func(i *structs.Instance) { i.HostID = "h2" })
		}, func(s *structs.InstanceGroupSpec) { s.Count = 2 }},
		{"placement_and_smaller_disk", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) {
			s.Placement = &structs.GroupPlacement{Policy: structs.PolicyAntiAffinity}
			s.Flavor = "m1.nano"
		}},
		{"recreate_fields", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) {
			s.KeyName, s.UserData = "ops", "#cloud-config\n"
			s.Constraints = []*structs.Constraint{{Attribute: "host.arch", Value: "x86_64"}}
			s.AZ = "nova"
		}},
		{"zone_without_hosts", func(f *planFixture) {}, func(s *structs.InstanceGroupSpec) { s.AZ = "elsewhere" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newPlanFixture(t)
			if c.name == "placement_and_smaller_disk" {
				f.must(f.s.UpsertFlavors(f.next(), []*structs.Flavor{{ID: "0", Name: "m1.nano", VCPUs: 1, MemoryMB: 64, RootGB: 0, IsPublic: true, RxTxFactor: 1}}))
			}
			c.setup(f)
			spec := baseSpec()
			c.spec(spec)
			spec.Canonicalize()
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			plan, err := planGroup(f.s, spec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(plan, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "group_plans/"+c.name+".json", append(b, '\n'))
		})
	}
}

// TestGroupPlanErrors: a spec whose flavor does not exist cannot be
// planned.
func TestGroupPlanErrors(t *testing.T) {
	f := newPlanFixture(t)
	spec := baseSpec()
	spec.Flavor = "m9.huge"
	spec.Canonicalize()
	if _, err := planGroup(f.s, spec); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("unknown flavor: %v", err)
	}
}

func TestMemberSlot(t *testing.T) {
	for name, want := range map[string]int{"web-1": 1, "web-12": 12, "web-0": 0, "web-01": 0, "web-": 0, "web-x": 0, "webs-1": 0, "web-1-2": 0, "web": 0} {
		if got := memberSlot("web", name); got != want {
			t.Errorf("memberSlot(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestGroupBackoff(t *testing.T) {
	for n, want := range map[int]string{0: "0s", 1: "0s", 2: "2s", 3: "4s", 4: "8s", 8: "2m0s", 20: "2m0s"} {
		if got := backoff(n).String(); got != want {
			t.Errorf("backoff(%d) = %s, want %s", n, got, want)
		}
	}
}
