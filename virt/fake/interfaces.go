package fake

import (
	"context"
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/virt"
)

// AttachInterface records a hot-plugged NIC in the instance's spec
// (Spec shows it, after the NICs it was spawned with); attaching a port
// it already has is a no-op.
func (d *Driver) AttachInterface(ctx context.Context, id string, nic *virt.NIC) error {
	if nic == nil || nic.PortID == "" {
		return fmt.Errorf("attach interface: a NIC with a port id is required")
	}
	return d.transition(ctx, "AttachInterface", id, func(in *instance) error {
		if slices.ContainsFunc(in.spec.NICs, func(n virt.NIC) bool { return n.PortID == nic.PortID }) {
			return nil
		}
		c := *nic
		c.IPs = slices.Clone(nic.IPs)
		in.spec.NICs = append(in.spec.NICs, c)
		return nil
	})
}

// DetachInterface forgets a port's NIC; detaching a port the instance
// does not have is a no-op.
func (d *Driver) DetachInterface(ctx context.Context, id string, portID string) error {
	return d.transition(ctx, "DetachInterface", id, func(in *instance) error {
		in.spec.NICs = slices.DeleteFunc(in.spec.NICs, func(n virt.NIC) bool { return n.PortID == portID })
		return nil
	})
}
