package server

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestInstanceUsageKeepsDeletedInstances(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	create := func(name, project string) *structs.Instance {
		t.Helper()
		var resp structs.InstanceCreateResponse
		if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: "m1.small", ImageID: "cirros",
			ProjectID: project, UserID: "u"}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Instances[0]
	}
	a, b := create("a", "p1"), create("b", "p2")
	// With no host they fail to schedule; then a delete purges at once.
	waitSettled(t, s, []string{a.ID, b.ID})

	var got structs.InstanceUsageResponse
	if err := s.RPC("Instance.Usage", &structs.InstanceUsageRequest{ProjectID: "p1"}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Instances) != 1 || got.Instances[0].ID != a.ID || len(got.Deleted) != 0 || got.Index == 0 {
		t.Fatalf("p1 before the delete: %+v", got)
	}

	// A blocking query wakes when a is deleted.
	blocked := make(chan *structs.InstanceUsageResponse, 1)
	errs := make(chan error, 1)
	go func() {
		var out structs.InstanceUsageResponse
		err := s.RPC("Instance.Usage", &structs.InstanceUsageRequest{ProjectID: "p1",
			QueryOptions: structs.QueryOptions{MinQueryIndex: got.Index, MaxQueryTime: 20 * time.Second}}, &out)
		errs <- err
		blocked <- &out
	}()
	time.Sleep(100 * time.Millisecond)
	if err := s.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{a.ID}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	woke := <-blocked
	if woke.Index <= got.Index || len(woke.Instances) != 0 || len(woke.Deleted) != 1 {
		t.Fatalf("after the delete: %+v", woke)
	}
	d := woke.Deleted[0]
	if d.InstanceID != a.ID || d.Name != "a" || d.ProjectID != "p1" || d.FlavorName != "m1.small" || d.VCPUs != 1 ||
		d.MemoryMB != 2048 || d.LocalGB != 20 || d.CreatedAt != a.CreatedAt || d.DeletedAt < d.CreatedAt {
		t.Fatalf("usage record %+v", d)
	}

	// Every project's.
	var all structs.InstanceUsageResponse
	if err := s.RPC("Instance.Usage", &structs.InstanceUsageRequest{}, &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Instances) != 1 || all.Instances[0].ID != b.ID || len(all.Deleted) != 1 || all.Deleted[0].InstanceID != a.ID {
		t.Fatalf("every project: %+v", all)
	}
}
