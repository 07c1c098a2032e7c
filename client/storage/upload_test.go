package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// checkImagePattern reads 64 KiB at 1 MiB of an image file in format
// and fails unless every byte is 0x5a.
func checkImagePattern(t *testing.T, format, file string) {
	t.Helper()
	if out, ok := qemutest.Try(t, file, qemutest.Opts{Format: format}, "read -P 0x5a 1M 64k"); !ok {
		t.Fatalf("%s image %s lacks the volume's data: %s", format, file, out)
	}
}

// TestFilePoolWriteVolumeImage: a volume's file is converted to an
// image file with its data, in qcow2 and raw.
func TestFilePoolWriteVolumeImage(t *testing.T) {
	p := testPool(t)
	ctx := context.Background()
	v := &structs.Volume{ID: "v1", SizeGB: 1, Format: "qcow2"}
	if _, err := p.CreateVolume(ctx, v, Source{}); err != nil {
		t.Fatal(err)
	}
	qemutest.IO(t, p.VolumePath(v.ID), "write -P 0x5a 1M 64k")
	for _, format := range []string{"qcow2", "raw"} {
		dst := filepath.Join(t.TempDir(), "image."+format)
		if err := p.WriteVolumeImage(ctx, v, format, dst); err != nil {
			t.Fatal(err)
		}
		checkImagePattern(t, format, dst)
	}
	if err := p.WriteVolumeImage(ctx, &structs.Volume{ID: "gone"}, "raw", filepath.Join(t.TempDir(), "x")); err == nil {
		t.Fatal("a volume without a file was written as an image")
	}
}

// TestRBDWriteVolumeImage reads an RBD volume through QEMU's rbd driver
// into a qcow2 image file with its data.
func TestRBDWriteVolumeImage(t *testing.T) {
	b := testRBD(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v := &structs.Volume{ID: randomID(t), SizeGB: 1}
	t.Cleanup(func() { _ = b.DeleteVolume(context.Background(), v.ID) })
	if _, err := b.CreateVolume(ctx, v, Source{}); err != nil {
		t.Fatal(err)
	}
	rbdIO(t, b, RBDVolumeImage(v.ID), "write -P 0x5a 1M 64k")
	dst := filepath.Join(t.TempDir(), "image.qcow2")
	if err := b.WriteVolumeImage(ctx, v, "qcow2", dst); err != nil {
		t.Fatal(err)
	}
	checkImagePattern(t, "qcow2", dst)
}
