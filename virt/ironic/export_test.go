package ironic

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// ProvisionForTest asks Ironic for a provision state directly, so tests
// can check the fake's state machine through the real client.
func ProvisionForTest(ctx context.Context, d *Driver, node, target string) error {
	return d.setProvision(ctx, node, nodes.ProvisionStateOpts{Target: nodes.TargetProvisionState(target)})
}
