package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestDevCloudReadyAndOwned: a fresh dev cloud says it is ready only once
// it is seeded (flavors there), and what an anonymous caller creates
// belongs to the dev admin user and project, so the OpenStack APIs,
// quotas and usage see it.
func TestDevCloudReadyAndOwned(t *testing.T) {
	t.Parallel()
	a := startDevAgent(t, nil)
	resp, err := http.Get(a.url("/v1/status/ready?wait=60s"))
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Ready  bool   `json:"ready"`
		Leader string `json:"leader"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !ready.Ready || ready.Leader == "" {
		t.Fatalf("ready: %d %+v %v", resp.StatusCode, ready, err)
	}
	// Ready means usable: the flavors are there at once.
	resp, err = http.Get(a.url("/v1/flavors"))
	if err != nil {
		t.Fatal(err)
	}
	var flavors []*structs.Flavor
	err = json.NewDecoder(resp.Body).Decode(&flavors)
	resp.Body.Close()
	if err != nil || len(flavors) == 0 {
		t.Fatalf("flavors right after ready: %d %v", len(flavors), err)
	}
	if resp, err := http.Get(a.url("/v1/status/ready?wait=soon")); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad wait: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	owner := a.devOwner.Load()
	if owner == nil || owner.UserID == "" || owner.ProjectID == "" {
		t.Fatalf("dev owner %+v", owner)
	}
	body := `{"Name":"mine","Flavor":"m1.tiny","Image":"cirros"}`
	resp, err = http.Post(a.url("/v1/instances"), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Instances []*structs.Instance }
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(created.Instances) != 1 {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	// The dev admin's instance, core and RAM quotas are lifted; usage
	// still counts.
	var q structs.QuotaResponse
	if err := a.self.RPC("Quota.Get", &structs.QuotaGetRequest{ProjectID: owner.ProjectID, Usage: true}, &q); err != nil {
		t.Fatal(err)
	}
	if q.Limits[structs.QuotaInstances] != structs.QuotaUnlimited || q.Limits[structs.QuotaRAM] != structs.QuotaUnlimited ||
		q.Usage[structs.QuotaInstances] != 1 {
		t.Errorf("dev admin's quota %+v", q)
	}
	inst := created.Instances[0]
	if inst.ProjectID != owner.ProjectID || inst.UserID != owner.UserID {
		t.Errorf("instance owned by project %q user %q, want the dev admin's %q %q", inst.ProjectID, inst.UserID, owner.ProjectID, owner.UserID)
	}
}

// TestDevReadinessSteps: ready once every step is done, whatever the
// order, and saying which steps are pending until then.
func TestDevReadinessSteps(t *testing.T) {
	d := newDevReadiness("image", "flavors")
	if got := d.NotReady(); got != "dev mode is still seeding flavors, image" {
		t.Errorf("not ready: %q", got)
	}
	for range 2 {
		if d.done("flavors") {
			t.Error("ready with the image pending")
		}
	}
	select {
	case <-d.Ready():
		t.Fatal("ready early")
	default:
	}
	if !d.done("image") {
		t.Error("the last step did not make it ready")
	}
	<-d.Ready()
	if d.done("image") {
		t.Error("a step done twice made it ready twice")
	}
}

// TestDevRequestsWaitForTheSeeding: a request sent the moment a dev
// cloud starts — before its flavors exist — waits for the seeding and
// gets them, while readiness answers at once.
func TestDevRequestsWaitForTheSeeding(t *testing.T) {
	t.Parallel()
	a := startDevAgent(t, nil)
	resp, err := http.Get(a.url("/v1/status/ready"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readiness: %d", resp.StatusCode)
	}
	resp, err = http.Get(a.url("/v1/flavors/1"))
	if err != nil {
		t.Fatal(err)
	}
	var f structs.Flavor
	err = json.NewDecoder(resp.Body).Decode(&f)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || f.Name != "m1.tiny" {
		t.Fatalf("flavor 1 at start: %d %+v %v", resp.StatusCode, f, err)
	}
}
