package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

func TestFilePoolVolumesSnapshotsAndClones(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	ctx := context.Background()
	v := &structs.Volume{ID: "v1", SizeGB: 1}
	loc, err := p.CreateVolume(ctx, v, Source{})
	if err != nil {
		t.Fatal(err)
	}
	if loc != p.VolumePath("v1") {
		t.Fatalf("location %s", loc)
	}
	if got, _ := p.VirtualSize(ctx, loc); got != 1<<30 {
		t.Fatalf("new volume is %d bytes", got)
	}
	// Data written to the volume is in its snapshot and in a volume
	// made from the snapshot; what the volume gets afterwards is not.
	qemutest.IO(t, loc, "write -P 0xab 0 64k")
	snap := &structs.VolumeSnapshot{ID: "s1", VolumeID: "v1", SizeGB: 1}
	sloc, err := p.CreateSnapshot(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	qemutest.IO(t, loc, "write -P 0xcd 0 64k")
	clone := &structs.Volume{ID: "v2", SizeGB: 2}
	if _, err := p.CreateVolume(ctx, clone, Source{SnapshotID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if out, ok := qemutest.Try(t, p.VolumePath("v2"), qemutest.Opts{}, "read -P 0xab 0 64k"); !ok {
		t.Fatalf("the clone lacks the snapshot's data: %s", out)
	}
	if got, _ := p.VirtualSize(ctx, p.VolumePath("v2")); got != 2<<30 {
		t.Fatalf("2 GB clone is %d bytes", got)
	}
	if out, ok := qemutest.Try(t, sloc, qemutest.Opts{}, "read -P 0xab 0 64k"); !ok {
		t.Fatalf("the snapshot changed with its volume: %s", out)
	}
	// A clone of a volume copies its current data.
	if _, err := p.CreateVolume(ctx, &structs.Volume{ID: "v3", SizeGB: 1}, Source{VolumeID: "v1"}); err != nil {
		t.Fatal(err)
	}
	if out, ok := qemutest.Try(t, p.VolumePath("v3"), qemutest.Opts{}, "read -P 0xcd 0 64k"); !ok {
		t.Fatalf("the volume clone lacks the volume's data: %s", out)
	}

	// Extend grows; repeating it (a restarted agent) changes nothing.
	v.SizeGB = 3
	for range 2 {
		if err := p.ExtendVolume(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := p.VirtualSize(ctx, loc); got != 3<<30 {
		t.Fatalf("extended volume is %d bytes", got)
	}
	// Creating again (a lost report) keeps the volume and its data.
	if _, err := p.CreateVolume(ctx, &structs.Volume{ID: "v1", SizeGB: 1}, Source{}); err != nil {
		t.Fatal(err)
	}
	if out, ok := qemutest.Try(t, loc, qemutest.Opts{}, "read -P 0xcd 0 64k"); !ok {
		t.Fatalf("a repeated create lost the volume's data: %s", out)
	}

	for _, del := range []func() error{
		func() error { return p.DeleteSnapshot(ctx, "s1") },
		func() error { return p.DeleteVolume(ctx, "v1") },
		func() error { return p.DeleteVolume(ctx, "v2") },
		func() error { return p.DeleteVolume(ctx, "v3") },
		func() error { return p.DeleteVolume(ctx, "v1") }, // again: nothing left to do
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(p.dir, "*.qcow2*"))
	marks, _ := filepath.Glob(filepath.Join(p.dir, ownedDir, "*"))
	if len(left) != 0 || len(marks) != 0 {
		t.Fatalf("left behind: %v %v", left, marks)
	}
}

func TestFilePoolNeverTouchesFilesItDidNotCreate(t *testing.T) {
	t.Parallel()
	p := testPool(t)
	ctx := context.Background()
	foreign := p.VolumePath("v9")
	if err := os.WriteFile(foreign, []byte("an operator's file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateVolume(ctx, &structs.Volume{ID: "v9", SizeGB: 1}, Source{}); err == nil || !strings.Contains(err.Error(), "did not create") {
		t.Fatalf("create over a foreign file: %v", err)
	}
	if err := p.DeleteVolume(ctx, "v9"); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Fatalf("delete of a foreign file: %v", err)
	}
	if b, err := os.ReadFile(foreign); err != nil || string(b) != "an operator's file" {
		t.Fatalf("the foreign file changed: %q %v", b, err)
	}
	// A half-made file of the pool's own (a crash mid-convert) is
	// replaced by a complete one.
	if err := os.WriteFile(filepath.Join(p.dir, ownedDir, "volume-v8.qcow2"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.VolumePath("v8")+".part", []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateVolume(ctx, &structs.Volume{ID: "v8", SizeGB: 1}, Source{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.VolumePath("v8") + ".part"); !os.IsNotExist(err) {
		t.Fatalf("the torn .part is still there: %v", err)
	}
	// Ids cannot name paths outside the pool.
	if got := p.VolumePath("../../etc/passwd"); filepath.Dir(got) != p.dir {
		t.Fatalf("an id with slashes names %s", got)
	}
}
