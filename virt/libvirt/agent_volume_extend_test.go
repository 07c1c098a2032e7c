package libvirt_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// extendAttached asks the servers to extend an in-use volume to size
// GB, as the Block Storage API does at 3.42.
func (c *cloud) extendAttached(id string, size int) {
	c.t.Helper()
	if err := c.rpc("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: id, ProjectID: "p1", NewSizeGB: size,
		ExtendAttached: true}, &structs.SingleVolumeResponse{}); err != nil {
		c.t.Fatalf("extend volume %s to %d GB: %v", id, size, err)
	}
}

// diskAlias is the device alias of the live domain's disk whose
// definition contains source.
func diskAlias(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, source string) string {
	t.Helper()
	x, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range regexp.MustCompile(`(?s)<disk .*?</disk>`).FindAllString(x, -1) {
		if strings.Contains(d, source) {
			if m := regexp.MustCompile(`<alias name='([^']+)'/>`).FindStringSubmatch(d); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no disk of %s in the live domain:\n%s", source, x)
	return ""
}

// guestDiskSize is the size QEMU gives the guest's disk dev (libvirt
// asks the running QEMU).
func guestDiskSize(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, dev string) int64 {
	t.Helper()
	_, capacity, _, err := lv.DomainGetBlockInfo(dom, dev, 0)
	if err != nil {
		t.Fatalf("block info of %s: %v", dev, err)
	}
	return int64(capacity)
}

// TestAgentExtendsAnAttachedFileVolume: a volume whose file sits on the
// host of the running instance it is attached to is extended in use
// (Cinder 3.42): the instance's QEMU holds the file, so the host's agent
// grows the guest's disk with virDomainBlockResize, which grows the
// file, and reports the volume in-use with its new size. QEMU gives the
// guest the new size, the data written before is still there, the new
// end of the disk takes writes, and after the detach the file has the
// new size and both patterns.
func TestAgentExtendsAnAttachedFileVolume(t *testing.T) {
	t.Parallel()
	qemutest.Need(t, "qemu-img", "qemu-io")
	c := newCloud(t)
	h := c.addStorageHost("hv1")
	id := c.boot("vm").ID
	file := filepath.Join(t.TempDir(), "volume.qcow2")
	vol := c.fileVolume(h, file)
	qemutest.IO(t, file, "write -P 0x5a 0 64k")

	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol}
	})
	c.waitVolume(vol, structs.VolumeInUse)
	c.waitStatus(id, "ACTIVE")
	lv := h.env.raw
	dom, err := lv.DomainLookupByName(h.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	if got := guestDiskSize(t, lv, dom, "sdb"); got != 1<<30 {
		t.Fatalf("QEMU gives the guest %d bytes before the extend, want %d", got, 1<<30)
	}

	start := time.Now()
	c.extendAttached(vol, 2)
	v := c.waitVolume(vol, structs.VolumeInUse)
	t.Logf("in-use again %v after the extend was asked", time.Since(start))
	if a := v.AttachmentOf(id); v.SizeGB != 2 || a == nil || a.AttachedAt == 0 {
		t.Fatalf("extended volume: %+v", v)
	}
	if got := guestDiskSize(t, lv, dom, "sdb"); got != 2<<30 {
		t.Fatalf("QEMU gives the guest %d bytes, want %d", got, 2<<30)
	}
	alias := diskAlias(t, lv, dom, file)
	readThrough(t, lv, dom, alias, 0x5a, 0)
	writeThrough(t, lv, dom, alias, 0xcd, 2<<30-64<<10)
	readThrough(t, lv, dom, alias, 0xcd, 2<<30-64<<10)

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol}
	})
	c.waitVolume(vol, structs.VolumeAvailable)
	if got := fileVirtualSize(t, file); got != 2<<30 {
		t.Fatalf("the volume's file is %d bytes after the detach, want %d", got, 2<<30)
	}
	qemutest.IO(t, file, "read -P 0x5a 0 64k")
	qemutest.IO(t, file, "read -P 0xcd 2147418112 64k")
}

// fileVirtualSize is a qcow2 file's disk size.
func fileVirtualSize(t *testing.T, file string) int64 {
	t.Helper()
	out, err := exec.Command("qemu-img", "info", "--output=json", "-U", file).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", file, err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	return info.VirtualSize
}
