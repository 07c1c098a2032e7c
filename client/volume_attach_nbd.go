package client

import (
	"fmt"
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
	ctx, id := r.c.ctx, r.alloc.InstanceID
	vol := &virt.Volume{ID: arg.VolumeID, Device: arg.Device, Network: &virt.NetworkDisk{
		Protocol: virt.NetworkNBD, Name: arg.NBD.Name, Hosts: []string{arg.NBD.Address}, TLS: true}}
	deadline := time.Now().Add(exportWait)
	pause := 250 * time.Millisecond
	for {
		err := va.AttachVolume(ctx, id, vol)
		if err == nil {
			return nil
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("attach export %s of %s: %w", arg.NBD.Name, arg.NBD.Address, err)
		}
		r.logger.Info("volume export not ready; trying again", "volume_id", arg.VolumeID, "export", arg.NBD.Name, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}
