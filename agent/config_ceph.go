package agent

import (
	"fmt"
	"net"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// CephConfig is the client's ceph block: the Ceph cluster RBD volumes
// live in (Cinder's rbd_* options and Nova's rbd_user/rbd_secret_uuid).
//
//	ceph {
//	  pool        = "volumes"
//	  user        = "cinder"
//	  conf        = "/etc/ceph/ceph.conf"
//	  keyring     = "/etc/ceph/ceph.client.cinder.keyring"
//	  mon_hosts   = ["10.0.0.1:6789"]
//	  secret_uuid = "457eb676-33da-42ec-9a8c-9293d545c337"
//	}
type CephConfig struct {
	// Pool is the RBD pool of the volumes (default "volumes").
	Pool string `hcl:"pool,optional"`
	// User is the cephx id without "client." (default "cinder").
	User string `hcl:"user,optional"`
	// Conf is a ceph.conf for the storage agent's tools; empty is
	// /etc/ceph/ceph.conf, or none when MonHosts are given.
	Conf string `hcl:"conf,optional"`
	// Keyring holds User's key (default
	// /etc/ceph/ceph.client.<user>.keyring); a hypervisor host gives it
	// to its libvirt as the secret SecretUUID.
	Keyring string `hcl:"keyring,optional"`
	// MonHosts are the monitors as "host:port" (msgr v1), which QEMU
	// connects to. Required.
	MonHosts []string `hcl:"mon_hosts"`
	// SecretUUID names the libvirt secret holding the key (Nova's
	// rbd_secret_uuid). Required.
	SecretUUID string `hcl:"secret_uuid"`
}

// checkStorage checks the storage and ceph blocks and fills in the
// ceph block's defaults.
func (c *Config) checkStorage() error {
	if cc := c.Client.Ceph; cc != nil {
		if cc.Pool == "" {
			cc.Pool = "volumes"
		}
		if cc.User == "" {
			cc.User = "cinder"
		}
		if cc.Keyring == "" {
			cc.Keyring = "/etc/ceph/ceph.client." + cc.User + ".keyring"
		}
		if len(cc.MonHosts) == 0 {
			return fmt.Errorf("client ceph block needs mon_hosts")
		}
		for _, h := range cc.MonHosts {
			if _, _, err := net.SplitHostPort(h); err != nil {
				return fmt.Errorf("client ceph block: mon_hosts %q is not host:port", h)
			}
		}
		if _, err := uuid.Parse(cc.SecretUUID); err != nil || len(cc.SecretUUID) != 36 {
			return fmt.Errorf("client ceph block: secret_uuid %q is not a UUID", cc.SecretUUID)
		}
	}
	st := c.Client.Storage
	if st == nil {
		return nil
	}
	if st.CapacityGB < 0 {
		return fmt.Errorf("client storage block needs a capacity_gb of 0 (the backend's) or more")
	}
	switch st.Backend {
	case "", structs.VolumeBackendFile:
		if st.PoolDir == "" {
			return fmt.Errorf("client storage block needs a pool_dir and a capacity_gb of 0 (the file system's) or more")
		}
	case structs.VolumeBackendRBD:
		if c.Client.Ceph == nil {
			return fmt.Errorf("client storage block: backend \"rbd\" needs the client's ceph block")
		}
		if st.NBDAddress != "" {
			return fmt.Errorf("client storage block: backend \"rbd\" serves no NBD exports (every host reaches Ceph); drop nbd_address")
		}
	default:
		return fmt.Errorf("client storage block: unknown backend %q (file, rbd)", st.Backend)
	}
	return nil
}
