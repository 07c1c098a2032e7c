package command

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/api"
)

// storageDevAgent starts a dev agent whose host keeps a 10 GB volume
// pool and returns its address and the pool. qemu-img must be installed
// (a failure under CI=true).
func storageDevAgent(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	pool := t.TempDir()
	zero := 0
	cfg := &agent.Config{DevMode: true, NodeName: "cmd-vol", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &agent.ClientConfig{Storage: &agent.StorageConfig{PoolDir: pool, CapacityGB: 10}}}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Error}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	return "http://" + a.HTTPAddr(), pool
}

// waitVolume waits until `volume status` shows status ("" for gone).
func waitVolume(t *testing.T, id, status string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, stderr, code := run(t, "volume", "status", "-json", id)
		var v api.Volume
		if (status == "" && code != 0 && strings.Contains(stderr, "could not be found")) ||
			(code == 0 && json.Unmarshal([]byte(out), &v) == nil && v.Status == status) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("volume %s never became %q: %q %q", id, status, out, stderr)
		}
	}
}

// TestVolumeCommandsAgainstDevAgent creates, lists, snapshots, copies
// and deletes volumes with cloudctl on an agent with a real pool.
func TestVolumeCommandsAgainstDevAgent(t *testing.T) {
	addr, pool := storageDevAgent(t)
	t.Setenv(api.EnvAddress, addr)
	t.Setenv(api.EnvToken, devToken(t, addr, "demo"))

	var vol api.Volume
	if err := json.Unmarshal([]byte(runOK(t, "volume", "create", "-json", "-size", "1", "data")), &vol); err != nil || vol.ID == "" {
		t.Fatalf("create: %+v %v", vol, err)
	}
	waitVolume(t, vol.ID, "available")
	if out := runOK(t, "volume", "list"); !strings.Contains(out, vol.ID) || !strings.Contains(out, "available") {
		t.Fatalf("list: %s", out)
	}
	out := runOK(t, "volume", "status", vol.ID)
	assertContains(t, "status", out, "Storage Host", filepath.Join(pool, "volume-"+vol.ID+".qcow2"))
	// A volume is named as an instance is: by ID, name or ID prefix.
	assertContains(t, "status by name", runOK(t, "volume", "status", "data"), vol.ID)

	var snap api.VolumeSnapshot
	if err := json.Unmarshal([]byte(runOK(t, "volume", "snapshot", "-json", "-name", "s1", vol.ID[:8])), &snap); err != nil || snap.ID == "" || snap.VolumeID != vol.ID {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	var clone api.Volume
	if err := json.Unmarshal([]byte(runOK(t, "volume", "create", "-json", "-source", vol.ID, "copy")), &clone); err != nil || clone.SizeGB != 1 {
		t.Fatalf("copy: %+v %v", clone, err)
	}
	waitVolume(t, clone.ID, "available")
	if _, stderr, code := run(t, "volume", "delete", vol.ID); code == 0 || !strings.Contains(stderr, "Invalid volume") {
		t.Fatalf("delete of a volume with a snapshot: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, "volume", "delete", "-force", clone.ID); code == 0 || !strings.Contains(stderr, "force_delete") {
		t.Fatalf("a member's force delete: %d %q", code, stderr)
	}
	runOK(t, "volume", "delete", "copy")
	waitVolume(t, clone.ID, "")

	var twin api.Volume
	if err := json.Unmarshal([]byte(runOK(t, "volume", "create", "-json", "-size", "1", "data")), &twin); err != nil || twin.ID == "" {
		t.Fatalf("create a second %q: %+v %v", "data", twin, err)
	}
	if _, stderr, code := run(t, "volume", "status", "data"); code == 0 || !strings.Contains(stderr, `"data" matches 2 volumes`) {
		t.Fatalf("status of a name two volumes share: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, "volume", "status", "nosuch"); code == 0 || !strings.Contains(stderr, "could not be found") {
		t.Fatalf("status of an unknown volume: %d %q", code, stderr)
	}
}

// TestVolumeAttachDetachAgainstDevAgent attaches a volume to an
// instance cloudctl booted with the same token (so of the same
// project), follows the operation to its end (the volume in-use), refuses a second attach, and detaches it.
func TestVolumeAttachDetachAgainstDevAgent(t *testing.T) {
	addr, _ := storageDevAgent(t)
	t.Setenv(api.EnvAddress, addr)
	token := devToken(t, addr, "demo")
	t.Setenv(api.EnvToken, token)
	// cloudctl boots the instance in the token's project, as it makes
	// the volume there, so the two can be joined.
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "holder")
	var inst api.Instance
	out := runOK(t, "instance", "status", "-json", "holder")
	if err := json.Unmarshal([]byte(out), &inst); err != nil || inst.ProjectID == "" || inst.Status != "ACTIVE" {
		t.Fatalf("the token's instance (of no project?): %q %v", out, err)
	}
	var vol api.Volume
	if err := json.Unmarshal([]byte(runOK(t, "volume", "create", "-json", "-size", "1", "data")), &vol); err != nil || vol.ID == "" {
		t.Fatalf("create: %+v %v", vol, err)
	}
	waitVolume(t, vol.ID, "available")

	out = runOK(t, "volume", "attach", "-device", "/dev/sdc", "data", "holder")
	assertContains(t, "attach", out, "compute_attach_volume", "Success")
	waitVolume(t, vol.ID, "in-use")
	if _, stderr, code := run(t, "volume", "attach", vol.ID, "holder"); code == 0 || !strings.Contains(stderr, "already attached") {
		t.Fatalf("a second attach: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, "volume", "detach", "-device", "/dev/sdc", vol.ID, "holder"); code == 0 {
		t.Fatalf("detach with -device: %d %q", code, stderr)
	}
	out = runOK(t, "volume", "detach", "data", "holder")
	assertContains(t, "detach", out, "compute_detach_volume", "Success")
	waitVolume(t, vol.ID, "available")
	if out, _, _ := run(t, "volume", "-h"); !strings.Contains(out, "attach") {
		t.Fatalf("volume help does not mention attach: %s", out)
	}
}
