package nova

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// usageListsServer reports whether an admin's detailed usage report over
// the last and next hour lists the server.
func usageListsServer(h *harness, id string) bool {
	h.t.Helper()
	const layout = "2006-01-02T15:04:05"
	now := time.Now().UTC()
	qs := "detailed=1&start=" + now.Add(-time.Hour).Format(layout) + "&end=" + now.Add(time.Hour).Format(layout)
	r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage?"+qs, adminTok, "", nil).expect(h.t, 200)
	for _, tu := range r.list("tenant_usages") {
		for _, su := range tu.(map[string]any)["server_usages"].([]any) {
			if su.(map[string]any)["instance_id"] == id {
				return true
			}
		}
	}
	return false
}

// TestDeletedServerRecordsLastUntilPurged: a deleted server's actions
// (2.21) and usage stay readable until its records are purged past the
// retention, then its actions are a 404 like any unknown server's.
func TestDeletedServerRecordsLastUntilPurged(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "short-lived", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	waitFor(t, "server gone", func() error {
		if r := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "", nil); r.status != 404 {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	actions := "/compute/v2.1/servers/" + id + "/os-instance-actions"
	if l := h.req("GET", actions, memberTok, "2.21", nil).expect(t, 200).list("instanceActions"); len(l) != 2 {
		t.Fatalf("deleted server's actions within the retention: %v", l)
	}
	if !usageListsServer(h, id) {
		t.Fatal("the usage report lost the deleted server within the retention")
	}

	// A cut-off before the deletion keeps everything.
	var out structs.DeletedPurgeResponse
	if err := s.RPC("Operator.PurgeDeleted", &structs.DeletedPurgeRequest{Before: time.Now().Add(-time.Hour).UnixNano()}, &out); err != nil || out.Purged != 0 {
		t.Fatalf("early purge: %+v %v", out, err)
	}
	h.req("GET", actions, adminTok, "2.21", nil).expect(t, 200)

	// Past the retention: purged, and the server is unknown.
	if err := s.RPC("Operator.PurgeDeleted", &structs.DeletedPurgeRequest{Before: time.Now().Add(time.Second).UnixNano()}, &out); err != nil || out.Purged != 1 {
		t.Fatalf("purge: %+v %v", out, err)
	}
	h.req("GET", actions, memberTok, "2.21", nil).fault(t, 404, "itemNotFound", "Instance "+id+" could not be found.")
	h.req("GET", actions, adminTok, "2.21", nil).fault(t, 404, "itemNotFound", "Instance "+id+" could not be found.")
	h.req("GET", actions+"/req-any", adminTok, "2.21", nil).fault(t, 404, "itemNotFound", "could not be found")
	if usageListsServer(h, id) {
		t.Fatal("the usage report still lists the purged server")
	}
}
