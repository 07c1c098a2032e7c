package libvirt_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/go-hclog"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// testURI is the libvirtd the tests use, the driver's default.
const testURI = libvirt.DefaultURI

var (
	probeOnce sync.Once
	probeErr  error
	// runID tells this test process's namespaces from another's.
	runID = func() string {
		b := make([]byte, 3)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}()
	seq atomic.Int64
)

// needLibvirtd skips the test when libvirtd cannot be reached — or fails
// it under CI=true, where a missing libvirtd is a broken setup, not a
// reason to test less.
func needLibvirtd(t *testing.T) {
	t.Helper()
	probeOnce.Do(func() {
		lv, err := dial(10 * time.Second)
		if err == nil {
			_, err = lv.ConnectGetLibVersion()
			_ = lv.Disconnect()
		}
		probeErr = err
	})
	if probeErr == nil {
		return
	}
	msg := fmt.Sprintf("libvirtd is not reachable at %s: %v (as root, scripts/libvirt-setup.sh installs and starts it)", testURI, probeErr)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// dial connects to libvirtd, retrying for up to wait (a test may run
// while libvirtd restarts).
func dial(wait time.Duration) (*golibvirt.Libvirt, error) {
	deadline := time.Now().Add(wait)
	for {
		u, _ := parseURI(testURI)
		lv, err := golibvirt.ConnectToURI(u)
		if err == nil || time.Now().After(deadline) {
			return lv, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rawConn is a connection of the test's own to libvirtd, to check what
// the driver did and to act behind its back.
func rawConn(t *testing.T) *golibvirt.Libvirt {
	t.Helper()
	lv, err := dial(30 * time.Second)
	if err != nil {
		t.Fatalf("connect to libvirtd: %v", err)
	}
	t.Cleanup(func() { _ = lv.Disconnect() })
	return lv
}

// env is one driver in a namespace of its own, on a clean pool in a
// temporary directory; at cleanup every domain and volume of the
// namespace and its pool are removed.
type env struct {
	t   *testing.T
	ns  string
	cfg libvirt.Config
	drv *libvirt.Driver
	raw *golibvirt.Libvirt
}

// newNamespace returns a fresh namespace name.
func newNamespace() string {
	return fmt.Sprintf("t%s-%d", runID, seq.Add(1))
}

func newEnv(t *testing.T, tweak func(*libvirt.Config)) *env {
	t.Helper()
	needLibvirtd(t)
	dir := t.TempDir()
	e := &env{t: t, ns: newNamespace(), raw: rawConn(t)}
	e.cfg = libvirt.Config{
		Namespace:   e.ns,
		ImagesDir:   filepath.Join(dir, "images"),
		ConsoleDir:  filepath.Join(dir, "console"),
		SnapshotDir: filepath.Join(dir, "snapshots"),
		HostName:    "hv-" + e.ns,
		Logger:      testLogger(t, "libvirt"),
	}
	if tweak != nil {
		tweak(&e.cfg)
	}
	t.Cleanup(func() { purgeNamespace(t, e.ns) })
	e.drv = e.open()
	return e
}

// open starts another driver on the env's namespace (as a restarted
// agent would); it is closed at cleanup.
func (e *env) open() *libvirt.Driver {
	e.t.Helper()
	d, err := libvirt.New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = d.Close() })
	return d
}

// purgeNamespace removes every domain and volume of a namespace and its
// pool: the tests' own clean-up, whatever the driver left.
func purgeNamespace(t *testing.T, ns string) {
	lv, err := dial(30 * time.Second) // a fresh one: libvirtd may have restarted
	if err != nil {
		t.Errorf("cleanup of namespace %s: %v", ns, err)
		return
	}
	defer func() { _ = lv.Disconnect() }()
	prefix := "stratus-" + ns + "-"
	doms, _, err := lv.ConnectListAllDomains(1, 0)
	if err != nil {
		t.Logf("cleanup: list domains: %v", err)
	}
	for _, dom := range doms {
		if !strings.HasPrefix(dom.Name, prefix) {
			continue
		}
		_ = lv.DomainDestroy(dom)
		if err := lv.DomainUndefineFlags(dom, golibvirt.DomainUndefineManagedSave|golibvirt.DomainUndefineNvram|
			golibvirt.DomainUndefineSnapshotsMetadata); err != nil {
			t.Logf("cleanup: undefine %s: %v", dom.Name, err)
		}
	}
	pool, err := lv.StoragePoolLookupByName("stratus-" + ns)
	if err != nil {
		return
	}
	vols, _, _ := lv.StoragePoolListAllVolumes(pool, 1, 0)
	for _, v := range vols {
		if err := lv.StorageVolDelete(v, 0); err != nil {
			t.Logf("cleanup: delete volume %s: %v", v.Name, err)
		}
	}
	_ = lv.StoragePoolDestroy(pool)
	if err := lv.StoragePoolUndefine(pool); err != nil {
		t.Logf("cleanup: undefine pool %s: %v", pool.Name, err)
	}
}

// testLogger sends a component's logs to t.Log at debug level when
// STRATUS_TEST_LOG is set, else warnings only.
func testLogger(t *testing.T, name string) hclog.Logger {
	level := hclog.Warn
	if os.Getenv("STRATUS_TEST_LOG") != "" {
		level = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Output: logWriter{t}})
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// tinySpec is the small instance the tests build: 64 MiB, one vCPU.
func tinySpec(id string) *virt.InstanceSpec {
	return &virt.InstanceSpec{ID: id, Name: "vm-" + id, VCPUs: 1, MemoryMB: 64, RootGB: 1}
}

// ctx bounds one operation.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// domainNames lists the domains of a namespace.
func domainNames(t *testing.T, lv *golibvirt.Libvirt, ns string) []string {
	t.Helper()
	doms, _, err := lv.ConnectListAllDomains(1, 0)
	if err != nil {
		t.Fatalf("list domains: %v", err)
	}
	var out []string
	for _, d := range doms {
		if strings.HasPrefix(d.Name, "stratus-"+ns+"-") {
			out = append(out, d.Name)
		}
	}
	return out
}

// volumeNames lists the volumes of a namespace's pool (none if it has
// no pool).
func volumeNames(t *testing.T, lv *golibvirt.Libvirt, pool string) []string {
	t.Helper()
	p, err := lv.StoragePoolLookupByName(pool)
	if err != nil {
		return nil
	}
	if err := lv.StoragePoolRefresh(p, 0); err != nil {
		t.Fatalf("refresh pool: %v", err)
	}
	vols, _, err := lv.StoragePoolListAllVolumes(p, 1, 0)
	if err != nil {
		t.Fatalf("list volumes: %v", err)
	}
	var out []string
	for _, v := range vols {
		out = append(out, v.Name)
	}
	return out
}

// domainState reads a domain's libvirt state by name; -1 if it does not
// exist.
func domainState(t *testing.T, lv *golibvirt.Libvirt, name string) golibvirt.DomainState {
	t.Helper()
	dom, err := lv.DomainLookupByName(name)
	if err != nil {
		if errors.As(err, new(golibvirt.Error)) {
			return -1
		}
		t.Fatalf("lookup %s: %v", name, err)
	}
	st, _, err := lv.DomainGetState(dom, 0)
	if err != nil {
		return -1
	}
	return golibvirt.DomainState(st)
}

// domainXML reads and parses a domain's definition (live when running).
func domainXML(t *testing.T, lv *golibvirt.Libvirt, name string, flags golibvirt.DomainXMLFlags) *libvirtxml.Domain {
	t.Helper()
	dom, err := lv.DomainLookupByName(name)
	if err != nil {
		t.Fatalf("lookup %s: %v", name, err)
	}
	doc, err := lv.DomainGetXMLDesc(dom, flags)
	if err != nil {
		t.Fatalf("xml of %s: %v", name, err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	return &x
}

// waitUntil polls cond for up to wait.
func waitUntil(t *testing.T, wait time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %v", wait, what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parseURI(s string) (*url.URL, error) { return url.Parse(s) }

// stripAttempt is a volume's name without its attempt
// (<domain>+<attempt>-<role> → <domain>-<role>), so tests can name an
// instance's volumes without knowing the attempt.
func stripAttempt(v string) string {
	i := strings.LastIndex(v, "+")
	if i < 0 || len(v) < i+9 {
		return v
	}
	return v[:i] + v[i+9:]
}

// instanceVolume is the name of the volume of the pool whose name
// without its attempt is want (<domain>-<role>); "" if there is none.
func instanceVolume(t *testing.T, lv *golibvirt.Libvirt, pool, want string) string {
	t.Helper()
	for _, v := range volumeNames(t, lv, pool) {
		if stripAttempt(v) == want {
			return v
		}
	}
	return ""
}
