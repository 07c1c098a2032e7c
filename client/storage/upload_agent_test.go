package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// imageServers adds the image records an upload reads and deletes to
// the fake Volume endpoint.
type imageServers struct {
	*servers
	mu      sync.Mutex
	status  map[string]string
	deleted []string
}

func (s *imageServers) RPC(method string, args, reply any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "Image.Get":
		id := args.(*structs.ImageSpecificRequest).ImageID
		if s.status[id] == "" {
			return structs.Errorf(structs.KindNotFound, "no image %s", id)
		}
		reply.(*structs.SingleImageResponse).Image = &structs.Image{ID: id, Status: s.status[id]}
		return nil
	case "Image.Delete":
		id := args.(*structs.ImageDeleteRequest).ImageID
		s.deleted = append(s.deleted, id)
		delete(s.status, id)
		return nil
	}
	return s.servers.RPC(method, args, reply)
}

// uploads records what an upload sent, or fails it.
type uploads struct {
	mu   sync.Mutex
	fail error
	got  map[string][]byte
}

func (u *uploads) Upload(_ context.Context, imageID string, size int64, body io.Reader) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.fail != nil {
		return u.fail
	}
	if int64(len(data)) != size {
		return errors.New("size mismatch")
	}
	u.got[imageID] = data
	return nil
}

// TestAgentUploadsVolumesToImages: an uploading volume is converted and
// sent as its image's data, then back in-use (it has an attachment) or
// available; a failed upload deletes the image and puts the volume
// back with the error; an image already active is not sent again; no
// converted file stays in the work directory. A volume deleting while
// a snapshot of it stays on the host goes to error_deleting, its file
// kept.
func TestAgentUploadsVolumesToImages(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	srv := &imageServers{servers: newServers(), status: map[string]string{"img1": structs.ImageQueued, "img2": structs.ImageQueued, "img3": structs.ImageActive}}
	up := &uploads{got: map[string][]byte{}}
	work := t.TempDir()
	a, err := New(Config{HostID: "st1", RPC: srv, Backend: pool, Uploader: up, WorkDir: work, MaxQueryTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2", Status: structs.VolumeCreating})
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2", Status: structs.VolumeUploading,
		Attachments: []*structs.VolumeAttachment{{ID: "a1", InstanceID: "i1"}}, Upload: &structs.VolumeUpload{ImageID: "img1", DiskFormat: "qcow2"}})
	srv.waitStatus(t, "v1", structs.VolumeInUse, false)
	up.mu.Lock()
	sent := up.got["img1"]
	up.mu.Unlock()
	if !bytes.HasPrefix(sent, []byte("QFI\xfb")) {
		t.Fatalf("img1 received %d bytes, not a qcow2 image", len(sent))
	}

	up.mu.Lock()
	up.fail = errors.New("image store full")
	up.mu.Unlock()
	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2", Status: structs.VolumeUploading,
		Upload: &structs.VolumeUpload{ImageID: "img2", DiskFormat: "vhd"}})
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	srv.mu.Lock()
	deleted := append([]string(nil), srv.deleted...)
	srv.mu.Unlock()
	if len(deleted) != 1 || deleted[0] != "img2" {
		t.Fatalf("images deleted after a failed upload: %v", deleted)
	}
	srv.servers.mu.Lock()
	msg := srv.vols["v1"].ErrorMessage
	srv.servers.mu.Unlock()
	if msg == "" {
		t.Fatal("a failed upload left no error message")
	}

	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2", Status: structs.VolumeUploading,
		Upload: &structs.VolumeUpload{ImageID: "img3", DiskFormat: "raw"}})
	srv.waitStatus(t, "v1", structs.VolumeAvailable, false)
	up.mu.Lock()
	_, resent := up.got["img3"]
	up.mu.Unlock()
	if resent {
		t.Fatal("an active image was uploaded again")
	}
	if left, _ := os.ReadDir(work); len(left) != 0 {
		t.Fatalf("converted images left in the work directory: %v", left)
	}

	// A snapshot that stays keeps its volume from being deleted.
	srv.setSnapshot(&structs.VolumeSnapshot{ID: "s1", VolumeID: "v1", Status: structs.SnapshotAvailable})
	srv.setVolume(&structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2", Status: structs.VolumeDeleting})
	srv.waitStatus(t, "v1", structs.VolumeErrorDeleting, false)
	if _, err := os.Stat(pool.VolumePath("v1")); err != nil {
		t.Fatalf("the volume's file went while a snapshot of it stayed: %v", err)
	}
}
