package libvirt_test

import (
	"fmt"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// addPeerHosts starts two hypervisor agents on two real libvirtds — the
// machine's own (hv-a) and a peer started for the test (hv-b) — that
// share storage and one namespace, each publishing the migration URI
// the other's libvirtd reaches it at.
func (c *cloud) addPeerHosts() (a, b *host) {
	c.t.Helper()
	peer := libvirtpeer.Start(c.t)
	a = &host{name: "hv-a", dataDir: c.t.TempDir(), env: newEnv(c.t, func(cfg *libvirt.Config) {
		cfg.HostName, cfg.MigrationURI, cfg.SharedStorage = "hv-a", peer.HostURI, true
	})}
	a.drv = a.env.drv
	benv := *a.env
	benv.cfg.URI, benv.cfg.MigrationURI, benv.cfg.HostName = peer.URI, peer.URI, "hv-b"
	benv.raw = rawConnTo(c.t, peer.URI)
	b = &host{name: "hv-b", dataDir: c.t.TempDir(), env: &benv}
	b.drv = benv.open()
	c.mu.Lock()
	c.hosts[a.name], c.hosts[b.name] = a, b
	c.mu.Unlock()
	c.startAgent(a)
	c.startAgent(b)
	return a, b
}

// TestAgentLiveMigrate moves a running instance between two real
// libvirtds through the servers and the agents (the live_migrate
// action): it ends ACTIVE on the other host, its domain running on that
// host's libvirtd and gone from the first; then back again; then it is
// deleted there.
func TestAgentLiveMigrate(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	hvA, hvB := c.addPeerHosts()
	inst := c.boot("lm")
	id := inst.ID
	for range 2 {
		src := c.hostOf(inst)
		dst := hvA
		if src == hvA {
			dst = hvB
		}
		c.task(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst.name })
		c.waitFor(id+" on "+dst.name, statusWait, func() error {
			inst = c.waitStatus(id, "ACTIVE")
			if h := c.host(dst.name); h == nil || inst.HostID != h.ID {
				return fmt.Errorf("instance on host %q, want %s", inst.HostID, dst.name)
			}
			return nil
		})
		expectDomain(t, dst, id, golibvirt.DomainRunning)
		if st := domainState(t, src.env.raw, src.drv.DomainName(id)); st != -1 {
			t.Fatalf("domain still on %s in state %d", src.name, st)
		}
		// The destination runs exactly one copy.
		if ids, err := dst.drv.ListInstances(ctx(t)); err != nil || len(ids) != 1 {
			t.Fatalf("%s lists %v, %v", dst.name, ids, err)
		}
	}

	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(id+" deleted", statusWait, func() error {
		if i := c.get(id); i != nil {
			return fmt.Errorf("still %s/%s", i.Status(), i.TaskState)
		}
		return nil
	})
	waitUntil(t, 60*time.Second, "every domain removed", func() error {
		for _, h := range []*host{hvA, hvB} {
			if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 0 {
				return fmt.Errorf("%s still has domains %v", h.name, got)
			}
		}
		return nil
	})
}
