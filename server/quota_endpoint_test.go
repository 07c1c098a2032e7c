package server

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func setQuota(t testing.TB, s *Server, project string, limits map[string]int64) {
	t.Helper()
	err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: project, Limits: limits, Force: true},
		&structs.QuotaResponse{})
	if err != nil {
		t.Fatalf("set quota of %s: %v", project, err)
	}
}

func getQuota(t testing.TB, s *Server, project, user string) *structs.QuotaResponse {
	t.Helper()
	var resp structs.QuotaResponse
	if err := s.RPC("Quota.Get", &structs.QuotaGetRequest{ProjectID: project, UserID: user, Usage: true}, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// TestConcurrentCreatesNeverExceedQuota races creates of one project
// against its instances quota: however the leader interleaves them,
// exactly the quota's worth succeed, because each is checked in the FSM
// against every create committed before it.
func TestConcurrentCreatesNeverExceedQuota(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	setQuota(t, s, "p1", map[string]int64{structs.QuotaInstances: 7})
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: fmt.Sprintf("r%d", i), FlavorID: "m1.tiny",
				ImageID: "cirros", ProjectID: "p1", UserID: "u1", Count: 1 + i%2}, &structs.InstanceCreateResponse{})
			switch {
			case err == nil:
				ok.Add(int32(1 + i%2))
			case structs.KindOf(err) == structs.KindQuotaReached && strings.Contains(structs.Message(err), "Quota exceeded for instances"):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	used := getQuota(t, s, "p1", "").Usage[structs.QuotaInstances]
	if used > 7 || int32(used) != ok.Load() {
		t.Fatalf("%d instances created (%d reported), quota 7", used, ok.Load())
	}
	if used < 6 || refused.Load() == 0 {
		t.Fatalf("only %d created, %d refused", used, refused.Load())
	}
}

func TestQuotaEndpoint(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	q := getQuota(t, s, "p1", "u1")
	if q.Limits[structs.QuotaInstances] != 10 || q.Limits[structs.QuotaCores] != 20 || q.Usage[structs.QuotaInstances] != 0 {
		t.Fatalf("defaults %+v", q)
	}
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "web", FlavorID: "m1.medium", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", Count: 3}, &structs.InstanceCreateResponse{}); err != nil {
		t.Fatal(err)
	}
	q = getQuota(t, s, "p1", "u1")
	if q.Usage[structs.QuotaInstances] != 3 || q.Usage[structs.QuotaCores] != 6 || q.Usage[structs.QuotaRAM] != 3*4096 {
		t.Fatalf("usage %v", q.Usage)
	}

	// Below the usage needs force, as in Nova; -1 always passes.
	err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: "p1",
		Limits: map[string]int64{structs.QuotaCores: 4}}, &structs.QuotaResponse{})
	if structs.KindOf(err) != structs.KindInvalid ||
		structs.Message(err) != "Quota limit 4 for cores must be greater than or equal to already used and reserved 6." {
		t.Fatalf("below usage: %v", err)
	}
	for _, bad := range []map[string]int64{{"gpus": 1}, {structs.QuotaCores: -5}} {
		err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: "p1", Limits: bad, Force: true}, &structs.QuotaResponse{})
		if structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	var upd structs.QuotaResponse
	if err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: "p1",
		Limits: map[string]int64{structs.QuotaCores: 7, structs.QuotaInstances: -1}}, &upd); err != nil {
		t.Fatal(err)
	}
	if upd.Limits[structs.QuotaCores] != 7 || upd.Limits[structs.QuotaInstances] != -1 || upd.Limits[structs.QuotaRAM] != 51200 {
		t.Fatalf("updated %v", upd.Limits)
	}
	err = s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "big", FlavorID: "m1.medium", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1"}, &structs.InstanceCreateResponse{})
	if structs.KindOf(err) != structs.KindQuotaReached || structs.Message(err) != "Quota exceeded for cores: Requested 2, but already used 6 of 7 cores" {
		t.Fatalf("over cores: %v", err)
	}

	// The default class: editable defaults for every other project.
	if err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeClass, ID: structs.QuotaDefaultClass,
		Limits: map[string]int64{structs.QuotaInstances: 2}}, &upd); err != nil {
		t.Fatal(err)
	}
	var class structs.QuotaResponse
	if err := s.RPC("Quota.GetClass", &structs.QuotaClassRequest{Class: "default"}, &class); err != nil || class.Limits[structs.QuotaInstances] != 2 {
		t.Fatalf("class %v %v", class.Limits, err)
	}
	if q := getQuota(t, s, "p2", ""); q.Limits[structs.QuotaInstances] != 2 {
		t.Fatalf("p2 %v", q.Limits)
	}
	if q := getQuota(t, s, "p1", ""); q.Limits[structs.QuotaInstances] != -1 {
		t.Fatalf("p1 keeps its own %v", q.Limits)
	}
	if err := s.RPC("Quota.Delete", &structs.QuotaDeleteRequest{ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if q := getQuota(t, s, "p1", ""); q.Limits[structs.QuotaInstances] != 2 || q.Limits[structs.QuotaCores] != 20 {
		t.Fatalf("p1 after delete %v", q.Limits)
	}

	// Key pairs and server groups are checked where they are stored.
	setQuota(t, s, "p1", map[string]int64{structs.QuotaServerGroups: 1})
	createGroup(t, s, "p1", structs.PolicyAffinity, 0)
	err = s.RPC("ServerGroup.Create", &structs.ServerGroupCreateRequest{Group: &structs.ServerGroup{Name: "two", ProjectID: "p1",
		Policy: structs.PolicyAffinity}}, &structs.SingleServerGroupResponse{})
	if structs.KindOf(err) != structs.KindQuotaReached {
		t.Fatalf("second group: %v", err)
	}
	if err := s.RPC("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeClass, ID: structs.QuotaDefaultClass,
		Limits: map[string]int64{structs.QuotaKeyPairs: 1}}, &upd); err != nil {
		t.Fatal(err)
	}
	kp := func(name string) error {
		return s.RPC("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: &structs.KeyPair{Name: name, UserID: "u1", Type: "ssh",
			PublicKey: "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== u@h"}}, &structs.SingleKeyPairResponse{})
	}
	if err := kp("one"); err != nil {
		t.Fatal(err)
	}
	if err := kp("two"); structs.KindOf(err) != structs.KindQuotaReached {
		t.Fatalf("second key pair: %v", err)
	}
	if q := getQuota(t, s, "p1", "u1"); q.Usage[structs.QuotaKeyPairs] != 1 || q.Usage[structs.QuotaServerGroups] != 1 {
		t.Fatalf("usage %v", q.Usage)
	}
}
