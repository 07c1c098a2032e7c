package client

import (
	"errors"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// CephAttach is how a hypervisor host's instances reach RBD volumes:
// the monitors QEMU connects to and the cephx user it authenticates as,
// whose key the host's libvirt holds in the secret SecretUUID (defined
// by the agent at start, never put in a domain).
type CephAttach struct {
	// MonHosts are the monitors as "host:port".
	MonHosts []string
	// User is the cephx id without "client.".
	User string
	// SecretUUID is the libvirt secret with User's key.
	SecretUUID string
	// Keyring is User's keyring file, with which the agent writes an
	// RBD boot volume itself when a rebuild reimages it; empty when the
	// host has none (such a reimage then fails).
	Keyring string
}

// attachRBD plugs an RBD volume into the instance as a network disk.
func (r *runner) attachRBD(va virt.VolumeAttacher, arg structs.VolumeActionArg) error {
	disk, err := r.rbdDisk(arg)
	if err != nil {
		return err
	}
	return va.AttachVolume(r.c.ctx, r.alloc.InstanceID, &virt.Volume{ID: arg.VolumeID, Device: arg.Device, Network: disk})
}

// rbdDisk is the network disk of arg's RBD image, reached with this
// host's Ceph settings.
func (r *runner) rbdDisk(arg structs.VolumeActionArg) (*virt.NetworkDisk, error) {
	ceph := r.c.cfg.Ceph
	if ceph == nil || len(ceph.MonHosts) == 0 {
		return nil, errors.New("volume " + arg.VolumeID + " is an RBD image and this host has no ceph settings (client ceph { mon_hosts, user, secret_uuid })")
	}
	return rbdNetworkDisk(arg.RBD, ceph), nil
}

// rbdNetworkDisk is the network disk of the RBD image name (pool/image),
// with the monitors, user and libvirt secret of ceph when there is one.
func rbdNetworkDisk(name string, ceph *CephAttach) *virt.NetworkDisk {
	d := &virt.NetworkDisk{Protocol: virt.NetworkRBD, Name: name}
	if ceph != nil {
		d.Hosts, d.User, d.SecretUUID = ceph.MonHosts, ceph.User, ceph.SecretUUID
	}
	return d
}
