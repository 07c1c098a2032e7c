package storage

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// servers stands in for the servers' Volume endpoint: the host's
// volumes and snapshots, a blocking listing, and reports applied with
// the FSM's preconditions (from-statuses).
type servers struct {
	mu      sync.Mutex
	index   uint64
	changed chan struct{}
	vols    map[string]*structs.Volume
	snaps   map[string]*structs.VolumeSnapshot
}

func newServers() *servers {
	return &servers{changed: make(chan struct{}), vols: map[string]*structs.Volume{}, snaps: map[string]*structs.VolumeSnapshot{}}
}

// bump records a change and wakes blocked listings; mu is held.
func (s *servers) bump() {
	s.index++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *servers) setVolume(v *structs.Volume) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vols[v.ID] = v.Copy()
	s.bump()
}

func (s *servers) setSnapshot(sn *structs.VolumeSnapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps[sn.ID] = sn.Copy()
	s.bump()
}

func (s *servers) RPC(method string, args, reply any) error {
	switch method {
	case "Volume.HostVolumes":
		req := args.(*structs.VolumeHostRequest)
		for {
			s.mu.Lock()
			if s.index > req.MinQueryIndex {
				r := reply.(*structs.VolumeHostResponse)
				r.Volumes, r.Snapshots, r.Index = nil, nil, s.index
				for _, v := range s.vols {
					r.Volumes = append(r.Volumes, v.Copy())
				}
				for _, sn := range s.snaps {
					r.Snapshots = append(r.Snapshots, sn.Copy())
				}
				s.mu.Unlock()
				return nil
			}
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-time.After(req.MaxQueryTime):
				return nil
			}
		}
	case "Volume.Report":
		return s.report(args.(*structs.VolumeReportRequest))
	}
	return fmt.Errorf("unknown method %s", method)
}

func (s *servers) report(r *structs.VolumeReportRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.bump()
	refuse := structs.Errorf(structs.KindInvalid, "status moved on")
	switch {
	case r.Update != nil:
		v := s.vols[r.Update.ID]
		if v == nil || !slices.Contains(r.Update.FromStatus, v.Status) {
			return refuse
		}
		v.Status = r.Update.Status
		if r.Update.ProviderLocation != nil {
			v.ProviderLocation = *r.Update.ProviderLocation
		}
		if r.Update.ErrorMessage != nil {
			v.ErrorMessage = *r.Update.ErrorMessage
		}
	case r.Delete != nil:
		if v := s.vols[r.Delete.ID]; v == nil || v.Status != structs.VolumeDeleting {
			return refuse
		}
		delete(s.vols, r.Delete.ID)
	case r.SnapshotUpdate != nil:
		sn := s.snaps[r.SnapshotUpdate.ID]
		if sn == nil || !slices.Contains(r.SnapshotUpdate.FromStatus, sn.Status) {
			return refuse
		}
		sn.Status = r.SnapshotUpdate.Status
	case r.SnapshotDelete != nil:
		delete(s.snaps, r.SnapshotDelete.ID)
	}
	return nil
}

// waitStatus waits for a volume (or, with snap, a snapshot) to reach
// status; "" waits for it to be gone.
func (s *servers) waitStatus(t *testing.T, id, status string, snap bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		got, msg := "", ""
		if snap {
			if sn := s.snaps[id]; sn != nil {
				got = sn.Status
			}
		} else if v := s.vols[id]; v != nil {
			got, msg = v.Status, v.ErrorMessage
		}
		ch := s.changed
		s.mu.Unlock()
		if got == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q (%s), want %q", id, got, msg, status)
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
	}
}

// imageFile is an image cache holding one raw image.
type imageFile string

func (f imageFile) Get(_ context.Context, img imagecache.Image) (string, error) {
	if img.ID != "img1" {
		return "", fmt.Errorf("no image %s", img.ID)
	}
	return string(f), nil
}

func startAgent(t *testing.T, srv *servers, pool *FilePool, images ImageFiles) context.CancelFunc {
	t.Helper()
	a, err := New(Config{HostID: "st1", RPC: srv, Backend: pool, Images: images, MaxQueryTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Run(ctx)
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

func TestAgentDrivesVolumesToTheirStatus(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	img := filepath.Join(t.TempDir(), "image.raw")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "raw", img, "64M").CombinedOutput(); err != nil {
		t.Fatalf("make an image: %v: %s", err, out)
	}
	qemuImgWrite(t, img)
	srv := newServers()
	startAgent(t, srv, pool, imageFile(img))

	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1"})
	srv.setVolume(&structs.Volume{ID: "v2", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1", ImageID: "img1"})
	srv.setVolume(&structs.Volume{ID: "bad", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1", ImageID: "missing"})
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	srv.waitStatus(t, "v2", structs.VolumeAvailable, false)
	srv.waitStatus(t, "bad", structs.VolumeError, false)
	if out, ok := qemutest.Try(t, pool.VolumePath("v2"), qemutest.Opts{}, "read -P 0x5a 0 4k"); !ok {
		t.Fatalf("the volume from the image lacks its data: %s", out)
	}

	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 2, Status: structs.VolumeExtending, Host: "st1"})
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	if got, _ := pool.VirtualSize(context.Background(), pool.VolumePath("v1")); got != 2<<30 {
		t.Fatalf("extended volume is %d bytes", got)
	}
	srv.setSnapshot(&structs.VolumeSnapshot{ID: "s1", VolumeID: "v2", SizeGB: 1, Status: structs.SnapshotCreating, Host: "st1"})
	srv.waitStatus(t, "s1", structs.SnapshotAvailable, true)
	srv.setVolume(&structs.Volume{ID: "v3", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1", SnapshotID: "s1"})
	srv.waitStatus(t, "v3", structs.VolumeAvailable, false)
	if out, ok := qemutest.Try(t, pool.VolumePath("v3"), qemutest.Opts{}, "read -P 0x5a 0 4k"); !ok {
		t.Fatalf("the volume from the snapshot lacks its data: %s", out)
	}

	// The snapshot goes first, as the servers order it (a volume with a
	// snapshot left is not deleted, unless a cascade makes both
	// deleting at once).
	srv.setSnapshot(&structs.VolumeSnapshot{ID: "s1", VolumeID: "v2", Status: structs.SnapshotDeleting, Host: "st1"})
	for _, id := range []string{"v1", "v2", "v3", "bad"} {
		srv.setVolume(&structs.Volume{ID: id, SizeGB: 1, Status: structs.VolumeDeleting, Host: "st1"})
	}
	for _, id := range []string{"v1", "v2", "v3", "bad"} {
		srv.waitStatus(t, id, "", false)
	}
	srv.waitStatus(t, "s1", "", true)
	if left, _ := filepath.Glob(filepath.Join(pool.dir, "*.qcow2*")); len(left) != 0 {
		t.Fatalf("files left in the pool: %v", left)
	}
}

func TestAgentRestartFinishesWorkWithoutRedoingIt(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	srv := newServers()
	// The agent made the volume and wrote to it, then died before its
	// report arrived: the next agent reports it available, keeping the
	// data.
	ctx := context.Background()
	if _, err := pool.CreateVolume(ctx, &structs.Volume{ID: "v1", SizeGB: 1}, Source{}); err != nil {
		t.Fatal(err)
	}
	qemutest.IO(t, pool.VolumePath("v1"), "write -P 0x77 0 4k")
	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1"})
	stop := startAgent(t, srv, pool, nil)
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	stop()
	if out, ok := qemutest.Try(t, pool.VolumePath("v1"), qemutest.Opts{}, "read -P 0x77 0 4k"); !ok {
		t.Fatalf("the restarted agent rebuilt the volume: %s", out)
	}
	// A volume without an image cache to fetch from fails, with the
	// reason in its record.
	srv.setVolume(&structs.Volume{ID: "v2", SizeGB: 1, Status: structs.VolumeCreating, Host: "st1", ImageID: "img1"})
	startAgent(t, srv, pool, nil)
	srv.waitStatus(t, "v2", structs.VolumeError, false)
}

// containsFailure reports whether qemu-io's read found other data.
// qemuImgWrite fills an image's first 4 KiB with 0x5a.
func qemuImgWrite(t *testing.T, raw string) {
	t.Helper()
	qemutest.Must(t, raw, qemutest.Opts{Format: "raw"}, "write -P 0x5a 0 4k")
}
