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
