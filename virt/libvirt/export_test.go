package libvirt

import "fmt"

// FailSpawnAt makes every spawn fail at step: "base" (caching the image),
// "disk", "disk.eph0", "disk.swap" (creating that volume), "define",
// "start", or "started" (after the domain booted). "" fails nothing.
func (d *Driver) FailSpawnAt(step string) {
	d.failStep = func(s string) error {
		if step != "" && s == step {
			return fmt.Errorf("injected failure at step %s", s)
		}
		return nil
	}
}

// DomainName is the name of instance id's domain.
func (d *Driver) DomainName(id string) string { return d.domainName(id) }

// PoolName is the driver's storage pool.
func (d *Driver) PoolName() string { return d.cfg.PoolName }

// SpawnLegacyNames makes spawns name their volumes as drivers did before
// volume names carried an attempt (<domain>-<role>), with no attempt in
// the metadata: the domains an upgraded agent finds.
func (d *Driver) SpawnLegacyNames(on bool) { d.legacyNames = on }

// WaitingForConnection is how many operations wait for a connection to
// libvirtd.
func (d *Driver) WaitingForConnection() int { return d.conn.waiters() }
