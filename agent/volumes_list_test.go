package agent

import (
	"net/http"
	"path/filepath"
	"slices"
	"testing"
)

// volumeNames reads the names of a volume or snapshot list in order.
func volumeNames(t *testing.T, r volumeResp, collection string) []string {
	t.Helper()
	var names []string
	for _, it := range r.body[collection].([]any) {
		names = append(names, it.(map[string]any)["name"].(string))
	}
	return names
}

// createVolume creates a volume and waits for it to be available.
func createVolume(t *testing.T, a *Agent, base, token string, spec map[string]any) string {
	t.Helper()
	r := volumeCall(t, a, "POST", base+"/volumes", token, "", map[string]any{"volume": spec}).want(t, http.StatusAccepted)
	id := r.body["volume"].(map[string]any)["id"].(string)
	waitVolumeStatus(t, a, base, token, id, "available")
	return id
}

// createSnapshot snapshots a volume and waits for it to be available.
func createSnapshot(t *testing.T, a *Agent, base, token, volumeID, name string) string {
	t.Helper()
	r := volumeCall(t, a, "POST", base+"/snapshots", token, "", map[string]any{"snapshot": map[string]any{"volume_id": volumeID, "name": name}}).
		want(t, http.StatusAccepted)
	id := r.body["snapshot"].(map[string]any)["id"].(string)
	waitSnapshotStatus(t, a, base, token, id, "available")
	return id
}

// TestVolumeListSortAndSummary: sort and the legacy sort_key/sort_dir
// order lists as Cinder's do, with Cinder's 400s; the summary counts
// the project's volumes and, from 3.36, lists metadata values.
func TestVolumeListSortAndSummary(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	demo := keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)
	b := createVolume(t, a, base, demo, map[string]any{"size": 2, "name": "b", "metadata": map[string]string{"tier": "gold"}})
	createVolume(t, a, base, demo, map[string]any{"size": 1, "name": "c", "metadata": map[string]string{"tier": "silver"}})
	createVolume(t, a, base, demo, map[string]any{"size": 3, "name": "a", "metadata": map[string]string{"tier": "gold", "zone": "x"}})

	for query, want := range map[string][]string{
		"":                              {"a", "c", "b"}, // created_at desc
		"?sort=size:asc":                {"c", "b", "a"},
		"?sort=name":                    {"c", "b", "a"}, // desc by default
		"?sort=display_name:asc":        {"a", "b", "c"},
		"?sort_key=name&sort_dir=asc":   {"a", "b", "c"},
		"?sort_key=size":                {"a", "b", "c"},
		"?sort=status:asc,size:desc":    {"a", "b", "c"},
		"?sort=ec2_id:asc,created_at":   {"a", "c", "b"}, // a column Stratus does not keep orders nothing
		"?sort=size:asc&limit=2":        {"c", "b"},
		"?sort=size:asc&marker=" + b:    {"a"},
		"?sort=created_at:asc&limit=10": {"b", "c", "a"},
	} {
		for _, list := range []string{"/volumes", "/volumes/detail"} {
			r := volumeCall(t, a, "GET", base+list+query, demo, "", nil).want(t, http.StatusOK)
			if got := volumeNames(t, r, "volumes"); !slices.Equal(got, want) {
				t.Errorf("%s%s: %v, want %v", list, query, got, want)
			}
		}
	}
	for query, msg := range map[string]string{
		"?sort=bogus":              "Invalid input received: Invalid sort key",
		"?sort=volume_metadata":    "Invalid input received: Invalid sort key",
		"?sort=size:up":            "Invalid input received: Unknown sort direction, must be 'desc' or 'asc'.",
		"?sort_dir=sideways":       "Unknown sort direction",
		"?sort=size&sort_key=name": "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
		"?limit=x":                 "limit param must be an integer",
		"?limit=-1":                "limit param must be positive",
	} {
		volumeCall(t, a, "GET", base+"/volumes"+query, demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", msg)
	}

	volumeCall(t, a, "GET", base+"/volumes/summary", demo, "3.11", nil).want(t, http.StatusNotFound)
	r := volumeCall(t, a, "GET", base+"/volumes/summary", demo, "3.12", nil).want(t, http.StatusOK)
	if r.raw != `{"volume-summary":{"total_count":3,"total_size":6}}` {
		t.Errorf("summary at 3.12: %s", r.raw)
	}
	r = volumeCall(t, a, "GET", base+"/volumes/summary?name=a", demo, "3.36", nil).want(t, http.StatusOK)
	if r.raw != `{"volume-summary":{"metadata":{"tier":["gold","silver"],"zone":["x"]},"total_count":3,"total_size":6}}` {
		t.Errorf("summary at 3.36: %s", r.raw)
	}
	// Another project sees none of these.
	alt := keystoneToken(t, a, "admin")
	r = volumeCall(t, a, "GET", "/volume/v3/"+projectOf(t, a, alt)+"/volumes/summary", alt, "3.12", nil).want(t, http.StatusOK)
	if r.raw != `{"volume-summary":{"total_count":0,"total_size":0}}` {
		t.Errorf("another project's summary: %s", r.raw)
	}
}

// TestSnapshotMetadataSortAndCascade: snapshot metadata routes answer
// as Cinder's; snapshots sort by name from 3.30; a cascade delete
// removes a volume with its snapshots and leaves nothing in the pool.
func TestSnapshotMetadataSortAndCascade(t *testing.T) {
	t.Parallel()
	a, pool := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)
	vol := createVolume(t, a, base, demo, map[string]any{"size": 1, "name": "v"})
	s1 := createSnapshot(t, a, base, demo, vol, "s1")
	s2 := createSnapshot(t, a, base, demo, vol, "s2")
	meta := base + "/snapshots/" + s1 + "/metadata"

	r := volumeCall(t, a, "GET", meta, demo, "", nil).want(t, http.StatusOK)
	if r.raw != `{"metadata":{}}` {
		t.Fatalf("empty metadata %s", r.raw)
	}
	r = volumeCall(t, a, "POST", meta, demo, "", map[string]any{"metadata": map[string]string{"k1": "v1", "k2": "v2"}}).want(t, http.StatusOK)
	if r.raw != `{"metadata":{"k1":"v1","k2":"v2"}}` {
		t.Fatalf("created %s", r.raw)
	}
	r = volumeCall(t, a, "POST", meta, demo, "", map[string]any{"metadata": map[string]string{"k3": "v3"}}).want(t, http.StatusOK)
	if r.raw != `{"metadata":{"k1":"v1","k2":"v2","k3":"v3"}}` {
		t.Fatalf("merged %s", r.raw)
	}
	r = volumeCall(t, a, "PUT", meta, demo, "", map[string]any{"metadata": map[string]string{"k2": "new"}}).want(t, http.StatusOK)
	if r.raw != `{"metadata":{"k2":"new"}}` {
		t.Fatalf("replaced %s", r.raw)
	}
	r = volumeCall(t, a, "PUT", meta+"/k4", demo, "", map[string]any{"meta": map[string]string{"k4": "v4"}}).want(t, http.StatusOK)
	if r.raw != `{"meta":{"k4":"v4"}}` {
		t.Fatalf("item set %s", r.raw)
	}
	r = volumeCall(t, a, "GET", meta+"/k4", demo, "", nil).want(t, http.StatusOK)
	if r.raw != `{"meta":{"k4":"v4"}}` {
		t.Fatalf("item show %s", r.raw)
	}
	volumeCall(t, a, "PUT", meta+"/k4", demo, "", map[string]any{"meta": map[string]string{"k5": "v"}}).fault(t, http.StatusBadRequest, "badRequest", "Request body and URI mismatch")
	volumeCall(t, a, "PUT", meta+"/k4", demo, "", map[string]any{"meta": map[string]string{"k4": "v", "k5": "v"}}).fault(t, http.StatusBadRequest, "badRequest", "Request body contains too many items")
	volumeCall(t, a, "DELETE", meta+"/k4", demo, "", nil).want(t, http.StatusOK)
	volumeCall(t, a, "GET", meta+"/k4", demo, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Snapshot "+s1+" has no metadata with key k4.")
	volumeCall(t, a, "DELETE", meta+"/k4", demo, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "has no metadata with key k4.")
	r = volumeCall(t, a, "GET", base+"/snapshots/"+s1, demo, "", nil).want(t, http.StatusOK)
	if m := r.body["snapshot"].(map[string]any)["metadata"].(map[string]any); len(m) != 1 || m["k2"] != "new" {
		t.Fatalf("snapshot's metadata in its view %s", r.raw)
	}
	volumeCall(t, a, "GET", base+"/snapshots/nope/metadata", demo, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Snapshot nope could not be found.")

	// Snapshot lists sort; "name" is a key only from 3.30.
	r = volumeCall(t, a, "GET", base+"/snapshots?sort=name:asc", demo, "3.30", nil).want(t, http.StatusOK)
	if got := volumeNames(t, r, "snapshots"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("snapshots by name: %v", got)
	}
	r = volumeCall(t, a, "GET", base+"/snapshots/detail", demo, "", nil).want(t, http.StatusOK)
	if got := volumeNames(t, r, "snapshots"); !slices.Equal(got, []string{"s2", "s1"}) {
		t.Errorf("snapshots by default: %v", got)
	}
	volumeCall(t, a, "GET", base+"/snapshots?sort=name:asc", demo, "3.29", nil).fault(t, http.StatusBadRequest, "badRequest", "Invalid sort key")

	// Cascade: refused without it, a bad value is a 400, force is admins'.
	volumeCall(t, a, "DELETE", base+"/volumes/"+vol, demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", "have snapshots")
	volumeCall(t, a, "DELETE", base+"/volumes/"+vol+"?cascade=maybe", demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", "Value 'maybe' for 'cascade' is not a boolean.")
	volumeCall(t, a, "DELETE", base+"/volumes/"+vol+"?cascade=true&force=true", demo, "3.23", nil).fault(t, http.StatusForbidden, "forbidden", "volume:force_delete")
	volumeCall(t, a, "DELETE", base+"/volumes/"+vol+"?cascade=true", demo, "", nil).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, vol, "")
	waitSnapshotStatus(t, a, base, demo, s1, "")
	waitSnapshotStatus(t, a, base, demo, s2, "")
	if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
		t.Fatalf("files left in the pool: %v", left)
	}
	// An admin's forced cascade takes a volume in error with its snapshot.
	vol = createVolume(t, a, base, demo, map[string]any{"size": 1, "name": "w"})
	s3 := createSnapshot(t, a, base, demo, vol, "s3")
	volumeCall(t, a, "POST", "/volume/v3/snapshots/"+s3+"/action", admin, "", map[string]any{"os-reset_status": map[string]any{"status": "error_deleting"}}).want(t, http.StatusAccepted)
	volumeCall(t, a, "DELETE", base+"/volumes/"+vol+"?cascade=true", demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", "Invalid volume: Volume status must be available")
	volumeCall(t, a, "DELETE", "/volume/v3/volumes/"+vol+"?cascade=yes&force=1", admin, "3.23", nil).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, vol, "")
	waitSnapshotStatus(t, a, base, demo, s3, "")
	if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
		t.Fatalf("files left in the pool: %v", left)
	}
}
