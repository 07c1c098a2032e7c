package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/virt"
)

// cephSecrets is a driver that keeps cephx keys for its guests' RBD
// disks (the libvirt driver's secrets).
type cephSecrets interface {
	DefineCephSecret(ctx context.Context, uuid, user, key string) error
}

// cephAttach readies a hypervisor host for RBD volumes: a driver that
// keeps secrets (libvirt) gets the key of the ceph block's user under the
// block's secret_uuid, and the host's agent the monitors, user and
// secret to attach with. nil without a ceph block (then RBD attaches on
// this host fail with a clear error).
func (a *Agent) cephAttach(drv virt.Driver) (*client.CephAttach, error) {
	cc := a.config.Client.Ceph
	if cc == nil {
		return nil, nil
	}
	att := &client.CephAttach{MonHosts: cc.MonHosts, User: cc.User, SecretUUID: cc.SecretUUID, Keyring: cc.Keyring}
	cs, ok := drv.(cephSecrets)
	if !ok {
		return att, nil
	}
	key, err := storage.CephKey(cc.Keyring, cc.User)
	if err != nil {
		return nil, fmt.Errorf("client ceph block: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cs.DefineCephSecret(ctx, cc.SecretUUID, cc.User, key); err != nil {
		return nil, fmt.Errorf("client ceph block: %w", err)
	}
	return att, nil
}
