package libvirt_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/virt"
)

// testBridge is a bridge name unique to the test (libvirt's taps live
// in the host's namespace, so the bridges must too), deleted when the
// test ends — after the domains, whose cleanups run first.
func testBridge(t *testing.T) string {
	t.Helper()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name := "brqt" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if exec.Command("ip", "link", "show", "dev", name).Run() == nil {
			if out, err := exec.Command("ip", "link", "del", "dev", name).CombinedOutput(); err != nil {
				t.Errorf("delete bridge %s: %v: %s", name, err, out)
			}
		}
	})
	return name
}

// masterOf is the bridge a device is on ("" when it is on none or
// missing).
func masterOf(t *testing.T, dev string) string {
	t.Helper()
	out, err := exec.Command("ip", "-j", "link", "show", "dev", dev).Output()
	if err != nil {
		return ""
	}
	var links []struct {
		Master string `json:"master"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip link show %s: %v %s", dev, err, out)
	}
	return links[0].Master
}

// TestNICsOnTheirBridges spawns a guest with a port: its interface is a
// tap named after the port on the network's bridge (created when
// missing) with the port's MAC; a second port hot-plugs onto another
// bridge and is kept in the persistent definition; detaching forgets
// it.
func TestNICsOnTheirBridges(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs the ip command (iproute2)")
		}
		t.Skip("needs the ip command (iproute2)")
	}
	br1, br2 := testBridge(t), testBridge(t)
	t.Parallel()
	e := newEnv(t, nil)
	port1, port2 := uuid.NewString(), uuid.NewString()
	spec := tinySpec("nic")
	spec.NICs = []virt.NIC{{PortID: port1, MAC: "fa:16:3e:12:34:56", Bridge: br1, NetworkID: "n1", IPs: []string{"10.0.0.5"}}}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("nic")
	x := domainXML(t, e.raw, name, 0)
	if len(x.Devices.Interfaces) != 1 {
		t.Fatalf("%d interfaces", len(x.Devices.Interfaces))
	}
	iface := x.Devices.Interfaces[0]
	tap1 := "tap" + port1[:11]
	if iface.MAC == nil || iface.MAC.Address != "fa:16:3e:12:34:56" || iface.Source == nil || iface.Source.Bridge == nil ||
		iface.Source.Bridge.Bridge != br1 || iface.Target == nil || iface.Target.Dev != tap1 {
		t.Fatalf("interface %+v", iface)
	}
	if got := masterOf(t, tap1); got != br1 {
		t.Fatalf("tap %s is on %q, want %s", tap1, got, br1)
	}

	if err := e.drv.AttachInterface(ctx(t), "nic", &virt.NIC{PortID: port2, MAC: "fa:16:3e:65:43:21", Bridge: br2}); err != nil {
		t.Fatal(err)
	}
	tap2 := "tap" + port2[:11]
	if got := masterOf(t, tap2); got != br2 {
		t.Fatalf("hot-plugged tap %s is on %q, want %s", tap2, got, br2)
	}
	persistent := domainXML(t, e.raw, name, golibvirt.DomainXMLInactive)
	if len(persistent.Devices.Interfaces) != 2 || persistent.Devices.Interfaces[1].MAC.Address != "fa:16:3e:65:43:21" {
		t.Fatalf("persistent interfaces %+v", persistent.Devices.Interfaces)
	}
	// Attaching it again changes nothing.
	if err := e.drv.AttachInterface(ctx(t), "nic", &virt.NIC{PortID: port2, MAC: "fa:16:3e:65:43:21", Bridge: br2}); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.DetachInterface(ctx(t), "nic", port2); err != nil {
		t.Fatal(err)
	}
	if persistent = domainXML(t, e.raw, name, golibvirt.DomainXMLInactive); len(persistent.Devices.Interfaces) != 1 {
		t.Fatalf("persistent interfaces after detach %+v", persistent.Devices.Interfaces)
	}

	if err := e.drv.Destroy(ctx(t), "nic"); err != nil {
		t.Fatal(err)
	}
	if masterOf(t, tap1) != "" {
		t.Fatal("the tap outlived its guest")
	}
	// The guest (no OS) ignored the unplug, so its second NIC stayed
	// live until now: both bridges the driver made go with it.
	for _, br := range []string{br1, br2} {
		if exec.Command("ip", "link", "show", "dev", br).Run() == nil {
			t.Fatalf("bridge %s, made by the driver, outlived its last guest", br)
		}
	}
}

// TestBridgesOfOthersStay spawns a guest on a bridge the driver did not
// make: destroying it leaves the bridge.
func TestBridgesOfOthersStay(t *testing.T) {
	br := testBridge(t)
	if out, err := exec.Command("ip", "link", "add", br, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v: %s", err, out)
	}
	t.Parallel()
	e := newEnv(t, nil)
	spec := tinySpec("other")
	spec.NICs = []virt.NIC{{PortID: uuid.NewString(), MAC: "fa:16:3e:12:34:57", Bridge: br}}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.Destroy(ctx(t), "other"); err != nil {
		t.Fatal(err)
	}
	if exec.Command("ip", "link", "show", "dev", br).Run() != nil {
		t.Fatal("a bridge the driver did not make was removed")
	}
}
