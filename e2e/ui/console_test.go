package ui

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/stratus-cloud/stratus/internal/libvirtlock"
)

// requireLibvirtd skips a test when libvirtd cannot be reached, or fails
// it under CI=true (scripts/libvirt-setup.sh starts it).
func requireLibvirtd(t *testing.T) {
	t.Helper()
	// Hold the machine's libvirt test lock so that virt/libvirt's restart
	// test never stops libvirtd under this test's guests.
	libvirtlock.Shared(t)
	lv, err := dialLibvirtd()
	if err == nil {
		_ = lv.Disconnect()
		return
	}
	msg := fmt.Sprintf("libvirtd is not reachable at qemu:///system: %v (as root, scripts/libvirt-setup.sh starts it)", err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func dialLibvirtd() (*golibvirt.Libvirt, error) {
	u, err := url.Parse("qemu:///system")
	if err != nil {
		return nil, err
	}
	return golibvirt.ConnectToURI(u)
}

// purgeNamespace removes a libvirt namespace's domains and pool: the
// agent is killed, so nothing else would.
func purgeNamespace(t *testing.T, ns string) {
	lv, err := dialLibvirtd()
	if err != nil {
		t.Errorf("cleanup of namespace %s: %v", ns, err)
		return
	}
	defer func() { _ = lv.Disconnect() }()
	doms, _, _ := lv.ConnectListAllDomains(1, 0)
	for _, dom := range doms {
		if strings.HasPrefix(dom.Name, "stratus-"+ns+"-") {
			_ = lv.DomainDestroy(dom)
			_ = lv.DomainUndefineFlags(dom, golibvirt.DomainUndefineManagedSave|golibvirt.DomainUndefineNvram)
		}
	}
	pool, err := lv.StoragePoolLookupByName("stratus-" + ns)
	if err != nil {
		return
	}
	vols, _, _ := lv.StoragePoolListAllVolumes(pool, 1, 0)
	for _, v := range vols {
		_ = lv.StorageVolDelete(v, 0)
	}
	_ = lv.StoragePoolDestroy(pool)
	_ = lv.StoragePoolUndefine(pool)
}

// TestConsolePageConnectsNoVNC boots a real QEMU guest (libvirt driver,
// a blank disk: SeaBIOS on the screen), asks for its noVNC console URL
// and opens it in headless Chromium: the vendored noVNC must complete the
// RFB handshake through the agent's websocket proxy and draw its canvas.
// A second visit with the used URL must fail to connect.
func TestConsolePageConnectsNoVNC(t *testing.T) {
	chromium := requireChromium(t)
	requireLibvirtd(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "uic" + hex.EncodeToString(b)
	dir := t.TempDir()
	t.Cleanup(func() { purgeNamespace(t, ns) })
	base := startDevAgent(t, "uicon", fmt.Sprintf(`client {
  driver = "libvirt"
  libvirt {
    namespace  = %q
    images_dir = %q
  }
}
`, ns, dir+"/images"))

	eventually(t, "the libvirt host up", 120*time.Second, func() error {
		var hosts []struct{ Name, Status string }
		if code, _ := call(t, "GET", base+"/v1/hosts", "", nil, &hosts); code != 200 || len(hosts) != 1 || hosts[0].Status != "up" {
			return fmt.Errorf("hosts %d %+v", code, hosts)
		}
		var flavors []struct{ ID string }
		if code, _ := call(t, "GET", base+"/v1/flavors", "", nil, &flavors); code != 200 || len(flavors) < 5 {
			return fmt.Errorf("flavors %d %d", code, len(flavors))
		}
		return nil
	})
	if code, _ := call(t, "POST", base+"/v1/flavors", "", map[string]any{"ID": "vnc1", "Name": "vnc.tiny",
		"VCPUs": 1, "MemoryMB": 64, "RootGB": 1}, &struct{}{}); code != 200 {
		t.Fatalf("create flavor: %d", code)
	}
	var created struct{ Instances []struct{ ID string } }
	if code, _ := call(t, "POST", base+"/v1/instances", "", map[string]any{"Name": "vnc-vm", "Flavor": "vnc1", "Image": "cirros"}, &created); code != 200 || len(created.Instances) != 1 {
		t.Fatalf("create instance: %d %+v", code, created)
	}
	id := created.Instances[0].ID
	t.Cleanup(func() { call(t, "DELETE", base+"/v1/instances/"+id, "", nil, nil) })
	eventually(t, "the guest ACTIVE", 180*time.Second, func() error {
		var inst struct{ Status string }
		if code, _ := call(t, "GET", base+"/v1/instances/"+id, "", nil, &inst); code != 200 || inst.Status != "ACTIVE" {
			return fmt.Errorf("instance %d %s", code, inst.Status)
		}
		return nil
	})
	var console struct{ URL string }
	if code, _ := call(t, "POST", base+"/v1/instances/"+id+"/consoles", "", map[string]string{"Type": "novnc"}, &console); code != 200 {
		t.Fatalf("console URL: %d", code)
	}
	if !strings.HasPrefix(console.URL, base+"/ui/console.html?path=") {
		t.Fatalf("console URL %s", console.URL)
	}

	browser := newBrowser(t, chromium)
	msgs := &consoleLog{}
	vnc := newTab(t, browser, "vnc", base, msgs)
	vnc.do("open the console page", chromedp.Navigate(console.URL))
	vnc.waitJS("noVNC connected with its canvas",
		`document.querySelector('#console-status').dataset.state === 'connected' && document.querySelector('#console-screen canvas')`, 120*time.Second)
	if w := must[float64](vnc, `document.querySelector('#console-screen canvas').width`); w < 320 {
		t.Fatalf("noVNC canvas is %v pixels wide", w)
	}
	vnc.screenshot("console-novnc")

	// The URL's token was used: a reload cannot connect.
	again := newTab(t, browser, "vnc-again", base, msgs)
	again.do("open the used console URL", chromedp.Navigate(console.URL))
	again.waitJS("the used URL refused", `document.querySelector('#console-status').dataset.state === 'error'`, 60*time.Second)

	// noVNC's own page, which the Compute API hands out, connects too
	// under its policy (its inline script allowed by hash).
	var lite struct{ URL string }
	if code, _ := call(t, "POST", base+"/v1/instances/"+id+"/consoles", "", map[string]string{"Type": "novnc"}, &lite); code != 200 {
		t.Fatalf("console URL: %d", code)
	}
	novnc := newTab(t, browser, "novnc-lite", base, msgs)
	novnc.do("open noVNC's page", chromedp.Navigate(strings.Replace(lite.URL, "/ui/console.html?", "/ui/vendor/novnc/vnc_lite.html?", 1)))
	novnc.waitJS("noVNC's page connected", `document.title === 'noVNC' && document.getElementById('status').textContent.startsWith('Connected to') && document.querySelector('#screen canvas')`, 120*time.Second)
	novnc.screenshot("console-novnc-lite")

	// The serial terminal: the page connects to the serial websocket and
	// shows what SeaBIOS prints after a reset of the guest.
	var serial struct{ URL string }
	if code, _ := call(t, "POST", base+"/v1/instances/"+id+"/consoles", "", map[string]string{"Type": "serial"}, &serial); code != 200 {
		t.Fatalf("serial console URL: %d", code)
	}
	u, err := url.Parse(serial.URL)
	if err != nil || u.Scheme != "ws" {
		t.Fatalf("serial console URL %q: %v", serial.URL, err)
	}
	term := newTab(t, browser, "serial", base, msgs)
	term.do("open the serial terminal", chromedp.Navigate(base+"/ui/console.html?serial="+url.QueryEscape(strings.TrimPrefix(u.RequestURI(), "/"))))
	term.waitJS("serial connected", `document.querySelector('#console-status').dataset.state === 'connected'`, 60*time.Second)
	lv, err := dialLibvirtd()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lv.Disconnect() }()
	dom, err := lv.DomainLookupByName("stratus-" + ns + "-" + id)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "SeaBIOS in the serial terminal", 120*time.Second, func() error {
		if must[bool](term, `document.querySelector('#console-serial').textContent.includes('SeaBIOS')`) {
			// The terminal shows text: no escape sequence left over.
			if must[bool](term, `document.querySelector('#console-serial').textContent.includes('\u001b')`) {
				t.Fatalf("an escape sequence is shown: %q", must[string](term, `document.querySelector('#console-serial').textContent`))
			}
			return nil
		}
		// Reset the guest so that its firmware prints again.
		_ = lv.DomainReset(dom, 0)
		time.Sleep(5 * time.Second)
		return fmt.Errorf("no SeaBIOS yet: %q", must[string](term, `document.querySelector('#console-serial').textContent`))
	})
	term.screenshot("console-serial")
	for _, m := range msgs.all() {
		switch m.msg.Type {
		case chromedp.ConsoleError, chromedp.ConsoleException:
			// The used URL's refused handshake is logged by design.
			if m.tab == "vnc-again" && m.msg.Type == chromedp.ConsoleError {
				continue
			}
			// noVNC's page names no icon: the browser's own /favicon.ico
			// look-up is a 404, as on Nova's novncproxy.
			if m.tab == "novnc-lite" && strings.HasSuffix(m.msg.URL, "/favicon.ico") {
				continue
			}
			t.Errorf("console %s in tab %s: %s (%s:%d)", m.msg.Type, m.tab, m.msg.Text, m.msg.URL, m.msg.Line+1)
		}
	}
}
