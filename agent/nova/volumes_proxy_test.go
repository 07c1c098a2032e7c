package nova

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// runStorageAgent runs the storage agent of hypervisor c's host on a file
// pool in a temporary directory (qemu-img required; under CI=true its
// absence fails the test), until the test ends.
func runStorageAgent(t *testing.T, s *server.Server, c *client.Client) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	pool, err := storage.NewFilePool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sa, err := storage.New(storage.Config{HostID: c.HostID(), NodeSecret: c.NodeSecret(), RPC: s, Backend: pool, MaxQueryTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sa.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestVolumeProxiesAgainstARealServer drives os-volumes and os-snapshots
// (until 2.35) through a real server with a storage host: create (a
// storage agent builds it), list, detail, show in Nova's camelCase view
// (the sample's keys, [{}] for no attachment), snapshot, delete, the
// errors Nova's proxies answer, and 404 from 2.36.
func TestVolumeProxiesAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t)
	_, hv := startStorageHypervisor(t, s, "hv-st")
	runStorageAgent(t, s, hv)

	h.req("GET", "/compute/v2.1/os-volumes", memberTok, "2.36", nil).fault(t, 404, "itemNotFound", msgNotFound)
	h.req("POST", "/compute/v2.1/os-volumes", memberTok, "", map[string]any{"volume": map[string]any{"size": 0}}).expect(t, 400)
	h.req("POST", "/compute/v2.1/os-volumes", memberTok, "", map[string]any{"volume": map[string]any{"display_name": "x"}}).
		fault(t, 400, "badRequest", "'size' is a required property")
	h.req("POST", "/compute/v2.1/os-volumes", memberTok, "", map[string]any{"volume": map[string]any{"size": 1, "name": "x"}}).expect(t, 400)
	h.req("POST", "/compute/v2.1/os-volumes", readerTok, "", map[string]any{"volume": map[string]any{"size": 1}}).expect(t, 403)
	h.req("POST", "/compute/v2.1/os-volumes", memberTok, "", map[string]any{"volume": map[string]any{"size": 1, "volume_type": "nope"}}).
		fault(t, 404, "itemNotFound", "Volume type nope could not be found.")

	// The sample asks for zone "dublin", which has no storage here.
	h.req("POST", "/compute/v2.1/os-volumes", memberTok, "2.35", sample(t, "os-volumes/os-volumes-post-req.json")).
		fault(t, 400, "badRequest", "Availability zone 'dublin' is invalid.")
	r := h.req("POST", "/compute/v2.1/os-volumes", memberTok, "2.35", map[string]any{"volume": map[string]any{
		"size": "1", "display_name": "Volume Name", "display_description": "Volume Description", "metadata": map[string]any{"k": "v"}}})
	vol := r.expect(t, 200).obj("volume")
	want := sample(t, "os-volumes/os-volumes-post-resp.json")
	sameKeys(t, "create", vol, want["volume"].(map[string]any))
	id := vol["id"].(string)
	if !strings.HasSuffix(r.header.Get("Location"), "/os-volumes/"+id) || vol["displayName"] != "Volume Name" {
		t.Fatalf("create: location %q, view %v", r.header.Get("Location"), vol)
	}
	waitFor(t, "volume "+id+" available", func() error {
		if v := volumeStatus(t, s, id); v.Status != structs.VolumeAvailable {
			return fmt.Errorf("status %s (%s)", v.Status, v.ErrorMessage)
		}
		return nil
	})

	for _, path := range []string{"/compute/v2.1/os-volumes", "/compute/v2.1/os-volumes/detail"} {
		list := h.req("GET", path, readerTok, "", nil).expect(t, 200).list("volumes")
		if len(list) != 1 {
			t.Fatalf("%s: %v", path, list)
		}
		v := list[0].(map[string]any)
		sameKeys(t, path, v, sample(t, "os-volumes/os-volumes-index-resp.json")["volumes"].([]any)[0].(map[string]any))
		if v["status"] != "available" || v["size"] != float64(1) || len(v["attachments"].([]any)) != 1 || len(v["attachments"].([]any)[0].(map[string]any)) != 0 {
			t.Fatalf("%s: %v", path, v)
		}
	}
	if got := h.req("GET", "/compute/v2.1/os-volumes?offset=1", readerTok, "", nil).expect(t, 200).list("volumes"); len(got) != 0 {
		t.Fatalf("offset 1: %v", got)
	}
	h.req("GET", "/compute/v2.1/os-volumes?limit=-1", readerTok, "", nil).expect(t, 400)
	show := h.req("GET", "/compute/v2.1/os-volumes/"+id, readerTok, "", nil).expect(t, 200).obj("volume")
	if show["metadata"].(map[string]any)["k"] != "v" || show["snapshotId"] != nil {
		t.Fatalf("show: %v", show)
	}
	h.req("GET", "/compute/v2.1/os-volumes/"+id, otherTok, "", nil).fault(t, 404, "itemNotFound", "Volume "+id+" could not be found.")

	// Snapshots of it.
	h.req("POST", "/compute/v2.1/os-snapshots", memberTok, "", map[string]any{"snapshot": map[string]any{}}).expect(t, 400)
	h.req("POST", "/compute/v2.1/os-snapshots", memberTok, "", map[string]any{"snapshot": map[string]any{"volume_id": id, "force": "maybe"}}).expect(t, 400)
	snap := h.req("POST", "/compute/v2.1/os-snapshots", memberTok, "", map[string]any{"snapshot": map[string]any{
		"volume_id": id, "display_name": "snap", "display_description": "Default description", "force": "false"}}).expect(t, 200).obj("snapshot")
	sameKeys(t, "snapshot", snap, sample(t, "os-snapshots/snapshot-create-resp.json")["snapshot"].(map[string]any))
	sid := snap["id"].(string)
	if snap["volumeId"] != id || snap["size"] != float64(1) {
		t.Fatalf("snapshot: %v", snap)
	}
	for _, path := range []string{"/compute/v2.1/os-snapshots", "/compute/v2.1/os-snapshots/detail"} {
		if list := h.req("GET", path, readerTok, "", nil).expect(t, 200).list("snapshots"); len(list) != 1 {
			t.Fatalf("%s: %v", path, list)
		}
	}
	h.req("GET", "/compute/v2.1/os-snapshots/"+sid, readerTok, "", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/os-snapshots/nope", readerTok, "", nil).fault(t, 404, "itemNotFound", "Snapshot nope could not be found.")
	h.req("DELETE", "/compute/v2.1/os-snapshots/nope", memberTok, "", nil).expect(t, 404)
	waitFor(t, "snapshot "+sid+" available", func() error {
		if st := h.req("GET", "/compute/v2.1/os-snapshots/"+sid, readerTok, "", nil).obj("snapshot")["status"]; st != "available" {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	h.req("DELETE", "/compute/v2.1/os-snapshots/"+sid, memberTok, "", nil).expect(t, 202)
	waitFor(t, "snapshot "+sid+" gone", func() error {
		if code := h.req("GET", "/compute/v2.1/os-snapshots/"+sid, readerTok, "", nil).status; code != 404 {
			return fmt.Errorf("status %d", code)
		}
		return nil
	})

	h.req("DELETE", "/compute/v2.1/os-volumes/nope", memberTok, "", nil).fault(t, 404, "itemNotFound", "Volume nope could not be found.")
	h.req("DELETE", "/compute/v2.1/os-volumes/"+id, readerTok, "", nil).expect(t, 403)
	h.req("DELETE", "/compute/v2.1/os-volumes/"+id, memberTok, "", nil).expect(t, 202)
	waitFor(t, "volume "+id+" gone", func() error {
		if code := h.req("GET", "/compute/v2.1/os-volumes/"+id, readerTok, "", nil).status; code != 404 {
			return fmt.Errorf("status %d", code)
		}
		return nil
	})
}
