package libvirt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// These tests need no libvirtd.

func TestCleanConsole(t *testing.T) {
	raw := []byte("\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16)\r\nBooting from Hard Disk...\r\n\r\nNo bootable device.\r\n\r\n")
	if got := cleanConsole(raw, 0); got != "SeaBIOS (version 1.16)\nBooting from Hard Disk...\n\nNo bootable device.\n" {
		t.Errorf("cleanConsole = %q", got)
	}
	if got := cleanConsole(raw, 1); got != "No bootable device.\n" {
		t.Errorf("tail 1 = %q", got)
	}
	if got := cleanConsole(raw, 99); strings.Count(got, "\n") != 4 {
		t.Errorf("tail 99 = %q", got)
	}
	if got := cleanConsole(nil, 1); got != "" {
		t.Errorf("empty log = %q", got)
	}
}

func TestInspectImage(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	q := make([]byte, 512)
	copy(q, qcow2Magic)
	q[24+4] = 1 // virtual size 1<<24... big-endian uint64 at 24
	info, err := inspectImage(write("a.qcow2", q))
	if err != nil || info.format != "qcow2" || info.virtualSize != 1<<24 {
		t.Errorf("qcow2: %+v, %v", info, err)
	}
	q[15] = 0x80 // a backing file offset
	if _, err := inspectImage(write("b.qcow2", q)); err == nil || !strings.Contains(err.Error(), "backing file") {
		t.Errorf("qcow2 with a backing file: %v", err)
	}
	info, err = inspectImage(write("c.raw", make([]byte, 4096)))
	if err != nil || info.format != "raw" || info.virtualSize != 4096 {
		t.Errorf("raw: %+v, %v", info, err)
	}
	if _, err := inspectImage(write("d.raw", nil)); err == nil {
		t.Error("empty image accepted")
	}
	if _, err := inspectImage(dir); err == nil {
		t.Error("directory accepted")
	}
}

func testDriver(t *testing.T, ns string) *Driver {
	t.Helper()
	d, err := New(Config{Namespace: ns, ImagesDir: t.TempDir(), URI: "qemu+unix:///system?socket=/nonexistent/sock"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestDomainXMLAndMetadata(t *testing.T) {
	d := testDriver(t, "")
	m := &instanceMeta{ID: "0b9f6c9e-0f7e-4b8e-9b55-3a8d0e5c8a11", Name: "web", Flavor: metaFlavor{VCPUs: 2, MemoryMB: 96, RootGB: 1},
		Image:      &metaImage{ID: "cirros", Source: "/srv/cirros.qcow2", Base: "/pool/base-x.qcow2", Format: "qcow2"},
		ConsoleLog: "/console/x.log"}
	m.setDisk(metaDisk{Role: diskRoot, Volume: "v", Path: "/pool/v"})
	m.setDisk(metaDisk{Role: diskSwap, Volume: "s", Path: "/pool/s"})
	doc, err := d.domainXML(m, "qemu", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	// Without a namespace the domain UUID is the instance's.
	if x.Name != "stratus-"+m.ID || x.UUID != m.ID || x.Type != "qemu" || x.Memory.Value != 96 || x.Memory.Unit != "MiB" ||
		x.VCPU.Value != 2 || len(x.Devices.Disks) != 2 || x.Devices.Disks[1].Target.Dev != "vdb" || x.CPU != nil {
		t.Errorf("domain %s", doc)
	}
	back, err := parseMeta(strings.Replace(x.Metadata.XML, ` xmlns="`+MetadataURI+`"`, "", 1))
	if err != nil || back.ID != m.ID || back.Flavor != m.Flavor || *back.Image != *m.Image || len(back.Disks) != 2 || !back.hasOS() {
		t.Errorf("metadata round trip: %+v, %v", back, err)
	}
	// Rescued: the rescue disk first, the root second, nothing else.
	m.Rescue = &metaImage{}
	m.setDisk(metaDisk{Role: diskRescue, Volume: "r", Path: "/pool/r"})
	doc, _ = d.domainXML(m, "kvm", "x86_64")
	x = libvirtxml.Domain{}
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	if len(x.Devices.Disks) != 2 || x.Devices.Disks[0].Source.File.File != "/pool/r" || x.Devices.Disks[1].Source.File.File != "/pool/v" ||
		x.CPU == nil || x.CPU.Mode != "host-model" || m.hasOS() {
		t.Errorf("rescued domain %s", doc)
	}
	// With a namespace, names and UUIDs differ per namespace.
	a, b := testDriver(t, "a"), testDriver(t, "b")
	if a.domainUUID(m.ID) == b.domainUUID(m.ID) || a.domainUUID(m.ID) == m.ID || a.domainName("x") != "stratus-a-x" {
		t.Error("namespaces share domain names or UUIDs")
	}
	if id, ok := a.instanceID("stratus-a-x"); !ok || id != "x" {
		t.Errorf("instanceID = %q %v", id, ok)
	}
	if _, ok := a.instanceID("stratus-b-x"); ok {
		t.Error("another namespace's domain taken for ours")
	}
}

func TestEventMapping(t *testing.T) {
	d := testDriver(t, "n")
	send := func(name string, ev golibvirt.DomainEventType, detail int32) {
		d.onEvent(golibvirt.DomainEventLifecycleMsg{Dom: golibvirt.Domain{Name: name}, Event: int32(ev), Detail: detail})
	}
	send("stratus-n-a", golibvirt.DomainEventStarted, 0)
	send("other-domain", golibvirt.DomainEventStarted, 0)
	send("stratus-n-a", golibvirt.DomainEventDefined, 0)
	send("stratus-n-a", golibvirt.DomainEventSuspended, 0)
	send("stratus-n-a", golibvirt.DomainEventStopped, int32(golibvirt.DomainEventStoppedSaved))
	send("stratus-n-a", golibvirt.DomainEventStopped, 0)
	send("stratus-n-a", golibvirt.DomainEventCrashed, 0)
	send("stratus-n-a", golibvirt.DomainEventUndefined, 0)
	want := []int{virt.PowerRunning, virt.PowerPaused, virt.PowerSuspend, virt.PowerShutdown, virt.PowerCrashed, virt.PowerNoState}
	for i, w := range want {
		ev := <-d.Events()
		if ev.ID != "a" || ev.PowerState != w {
			t.Errorf("event %d = %+v, want power %d", i, ev, w)
		}
	}
	select {
	case ev := <-d.Events():
		t.Errorf("unexpected event %+v", ev)
	default:
	}
}

func TestChooseVirtType(t *testing.T) {
	caps := func(types ...string) *libvirtxml.Caps {
		c := &libvirtxml.Caps{Host: libvirtxml.CapsHost{CPU: &libvirtxml.CapsHostCPU{Arch: "x86_64"}}}
		g := libvirtxml.CapsGuest{OSType: "hvm", Arch: libvirtxml.CapsGuestArch{Name: "x86_64"}}
		for _, ty := range types {
			g.Arch.Domains = append(g.Arch.Domains, libvirtxml.CapsGuestDomain{Type: ty})
		}
		c.Guests = []libvirtxml.CapsGuest{g}
		return c
	}
	for _, c := range []struct {
		offered    []string
		configured string
		want       string
		fails      bool
	}{
		{[]string{"qemu", "kvm"}, "", "kvm", false},
		{[]string{"qemu"}, "", "qemu", false},
		{[]string{"qemu", "kvm"}, "qemu", "qemu", false},
		{[]string{"qemu"}, "kvm", "", true},
		{nil, "", "", true},
	} {
		got, arch, err := chooseVirtType(caps(c.offered...), c.configured)
		if got != c.want || (err != nil) != c.fails || arch != "x86_64" {
			t.Errorf("offered %v configured %q: %q %q %v", c.offered, c.configured, got, arch, err)
		}
	}
}
