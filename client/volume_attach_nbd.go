package client

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// exportWait bounds how long an attach waits for the storage host to
// serve a new attachment's export: the storage agent starts serving it
// when it sees the attachment, which the servers record in the same
// entry that asks this agent for the attach, so the two race.
const exportWait = 2 * time.Minute

// attachExport attaches a volume kept on another host: QEMU opens the
// storage host's NBD export of this attachment over TLS (the
// certificates of libvirt's nbd_tls_x509_cert_dir). A refused attach is
// tried again, with a growing pause, until the export answers or
// exportWait passes.
func (r *runner) attachExport(va virt.VolumeAttacher, arg structs.VolumeActionArg) error {
	vol := &virt.Volume{ID: arg.VolumeID, Device: arg.Device, Network: nbdDisk(arg.NBD)}
	return r.retryExport(arg, func() error { return va.AttachVolume(r.c.ctx, r.alloc.InstanceID, vol) })
}

// nbdDisk is the network disk of a storage host's export, over TLS.
func nbdDisk(e *structs.VolumeExport) *virt.NetworkDisk {
	return &virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: e.Name, Hosts: []string{e.Address}, TLS: true}
}

// spawnDriver spawns spec with the driver. An instance whose spawn
// opens an NBD export (a root or creation-time volume of another
// storage host) may come before its storage agent serves the export,
// which it starts when it sees the attachment (created with the
// instance) or the move's destination (released to spawn): QEMU then
// fails to start and the driver removes what it made, so the spawn is
// tried again with attachExport's patience.
func (r *runner) spawnDriver(spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	ctx := r.c.ctx
	if !opensExports(spec) {
		return r.c.driver.Spawn(ctx, spec)
	}
	deadline := time.Now().Add(exportWait)
	pause := 250 * time.Millisecond
	for {
		info, err := r.c.driver.Spawn(ctx, spec)
		if err == nil || ctx.Err() != nil || time.Now().Add(pause).After(deadline) {
			return info, err
		}
		r.logger.Info("spawn failed while it opens volume exports; trying again", "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// opensExports reports whether spec's volumes include an NBD export.
func opensExports(spec *virt.InstanceSpec) bool {
	if v := spec.RootVolume; v != nil && v.Network != nil && v.Network.Protocol == virt.NetworkNBD {
		return true
	}
	for _, v := range spec.Volumes {
		if v.Network != nil && v.Network.Protocol == virt.NetworkNBD {
			return true
		}
	}
	return false
}
