package libvirt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// libvirtdPidFile is where libvirtd -d (as root) writes its pid.
const libvirtdPidFile = "/run/libvirtd.pid"

// TestLibvirtdRestart kills libvirtd under a running agent and starts it
// again with scripts/libvirt-setup.sh: during the outage operations fail
// with ErrUnavailable instead of hanging or panicking; afterwards the
// driver has reconnected by itself, its event subscription is back, and
// the instance is still the same guest, managed as before.
//
// It is deliberately not parallel: Go runs the package's sequential
// tests before it releases the parallel ones, so no other test of the
// package has a domain operation in flight while libvirtd is down; and
// it holds the test lock (main_test.go) exclusively, so no other test
// process of the package has either.
func TestLibvirtdRestart(t *testing.T) {
	needLibvirtd(t)
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("restarting libvirtd needs root")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "libvirt-setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pid := libvirtdPid(t)
	if pid == 0 {
		skip("libvirtd was not started by scripts/libvirt-setup.sh (no %s)", libvirtdPidFile)
	}
	// Other test processes may be using libvirtd: wait for them, and
	// keep new ones out while it is down.
	got, release := exclusive(12 * time.Minute)
	if !got {
		skip("other test processes kept using libvirtd for 12 minutes; not restarting it under them")
	}
	defer release()
	pid = libvirtdPid(t) // it may have been restarted meanwhile
	if pid == 0 {
		skip("libvirtd is not running from %s", libvirtdPidFile)
	}

	c := newCloud(t)
	h := c.addHost("hv1", time.Hour) // events only: they must survive the restart
	id := c.boot("vm").ID
	name := h.drv.DomainName(id)
	qemu := domainID(t, h.env.raw, name)
	impatientCfg := h.env.cfg
	impatientCfg.ReconnectWait = 300 * time.Millisecond
	impatient, err := libvirt.New(impatientCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	if _, err := impatient.GetInfo(ctx(t), id); err != nil {
		t.Fatal(err)
	}

	// Kill libvirtd; the guest keeps running.
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("kill libvirtd %d: %v", pid, err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted { // leave a working libvirtd behind, whatever happened
			_ = exec.Command(script).Run()
		}
	})
	waitUntil(t, 30*time.Second, "libvirtd to exit", func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("libvirtd %d still running", pid)
		}
		return nil
	})
	down := time.Now()
	_, err = impatient.GetInfo(ctx(t), id)
	if !errors.Is(err, libvirt.ErrUnavailable) || !strings.Contains(err.Error(), "not connected to libvirtd") {
		t.Fatalf("GetInfo while libvirtd is down = %v, want ErrUnavailable", err)
	}
	t.Logf("GetInfo while libvirtd is down: %v (after %v)", err, time.Since(down))
	short, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	err = h.drv.PowerOff(short, id, 0)
	cancel()
	if err == nil {
		t.Fatal("PowerOff succeeded while libvirtd is down")
	}

	// Start it again: the drivers reconnect on their own.
	if out, err := exec.Command(script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	restarted = true
	back := time.Now()
	waitUntil(t, 30*time.Second, "the driver to reconnect", func() error {
		info, err := h.drv.GetInfo(ctx(t), id)
		if err != nil {
			return err
		}
		if info.PowerState != virt.PowerRunning {
			return fmt.Errorf("power %d", info.PowerState)
		}
		return nil
	})
	t.Logf("driver reconnected %v after libvirtd was started again", time.Since(back))
	h.env.raw = rawConn(t)
	if got := domainID(t, h.env.raw, name); got != qemu {
		t.Fatalf("the guest changed across the restart: domain id %d → %d", qemu, got)
	}

	// Events flow again: a destroy behind the agent's back is seen at
	// once (the power sync is an hour away).
	dom, err := h.env.raw.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.env.raw.DomainDestroy(dom); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "SHUTOFF after the restart", func() error {
		if inst := c.get(id); inst.Status() != "SHUTOFF" {
			return fmt.Errorf("status %s", inst.Status())
		}
		return nil
	})
	c.task(id, structs.OpStart)
	c.waitStatus(id, "ACTIVE")
	if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 1 {
		t.Fatalf("domains after the restart: %v", got)
	}
}

// libvirtdPid reads libvirtd's pid file; 0 if there is none.
func libvirtdPid(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile(libvirtdPidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 {
		return 0
	}
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != "libvirtd" {
		return 0
	}
	return pid
}
