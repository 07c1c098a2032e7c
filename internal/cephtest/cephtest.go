// Package cephtest finds, for a test, the single-node Ceph cluster that
// scripts/ceph-setup.sh runs (STRATUS_CEPH_DIR, default
// /var/lib/stratus-ceph): its ceph.conf, the client.cinder keyring and
// its msgr v1 monitor, checked by listing the pool volumes. Without a
// cluster that answers, the test fails under CI=true and skips
// elsewhere. It is for tests only and must not be imported by
// production code.
package cephtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Pool and User are the pool and cephx user ceph-setup.sh makes.
const (
	Pool = "volumes"
	User = "cinder"
)

// Cluster is the test cluster's files and monitor.
type Cluster struct {
	Dir, Conf, Keyring string
	// Mon is the monitor's msgr v1 address (host:port), as libvirt's
	// rbd disks name it.
	Mon string
}

var monRE = regexp.MustCompile(`(?m)^mon host = .*v1:([0-9.]+:[0-9]+)`)

// Need returns the cluster, or fails (CI=true) or skips the test.
func Need(t testing.TB) *Cluster {
	t.Helper()
	dir := os.Getenv("STRATUS_CEPH_DIR")
	if dir == "" {
		dir = "/var/lib/stratus-ceph"
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "ceph.conf"), Keyring: filepath.Join(dir, "ceph.client."+User+".keyring")}
	conf, err := os.ReadFile(c.Conf)
	if err != nil {
		Missing(t, "%v", err)
	}
	m := monRE.FindSubmatch(conf)
	if m == nil {
		t.Fatalf("%s names no msgr v1 monitor address", c.Conf)
	}
	c.Mon = string(m[1])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "rbd", "-c", c.Conf, "--id", User, "ls", Pool).CombinedOutput(); err != nil {
		Missing(t, "rbd ls %s: %v: %s", Pool, err, out)
	}
	return c
}

// Missing fails the test under CI=true, where the cluster is required,
// and skips it elsewhere.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("a Ceph cluster (scripts/ceph-setup.sh) is required under CI=true: "+format, args...)
	}
	t.Skipf("no Ceph cluster (run scripts/ceph-setup.sh): "+format, args...)
}
