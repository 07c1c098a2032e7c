package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/virt"
)

// Driver drives the bare-metal nodes of one Ironic. The driver New
// returns fronts every node (of its resource class prefix); Host returns
// one scoped to a single node, which is what each of the agent's hosts
// uses.
type Driver struct {
	cfg    Config
	logger hclog.Logger
	conn   *conn
	// node is the uuid of the only node a scoped driver fronts; empty
	// for the driver of every node.
	node string
}

// conn is the Bare Metal client, shared by a driver and its scoped
// copies, made on first use (Keystone auth needs the network).
type conn struct {
	mu sync.Mutex
	sc *gophercloud.ServiceClient
	// claimMu serializes picking a free node among concurrent spawns
	// of this agent; Ironic's own 409 on instance_uuid guards against
	// other agents.
	claimMu sync.Mutex
}

var (
	_ virt.Driver    = (*Driver)(nil)
	_ virt.MultiHost = (*Driver)(nil)
)

// New checks cfg and returns a driver of every node. It does not reach
// Ironic: the first call does.
func New(cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg, logger: cfg.Logger.Named("ironic"), conn: &conn{}}, nil
}

// client returns the Bare Metal client, authenticating on first use.
func (d *Driver) client(ctx context.Context) (*gophercloud.ServiceClient, error) {
	d.conn.mu.Lock()
	defer d.conn.mu.Unlock()
	if d.conn.sc == nil {
		sc, err := serviceClient(ctx, d.cfg)
		if err != nil {
			return nil, err
		}
		d.conn.sc = sc
	}
	return d.conn.sc, nil
}

// Name implements virt.Driver.
func (d *Driver) Name() string { return "ironic" }

// Capabilities implements virt.Driver: the core only.
func (d *Driver) Capabilities() virt.Capabilities { return virt.Capabilities{} }

// Hosts implements virt.MultiHost: the uuids of the nodes.
func (d *Driver) Hosts(ctx context.Context) ([]string, error) {
	list, err := d.listNodes(ctx, nodes.ListOpts{})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, n := range list {
		out = append(out, n.UUID)
	}
	return out, nil
}

// Host implements virt.MultiHost: a driver of the node with that uuid.
func (d *Driver) Host(key string) (virt.Driver, error) {
	if key == "" {
		return nil, errors.New("ironic: empty node uuid")
	}
	if d.node != "" && d.node != key {
		return nil, fmt.Errorf("ironic: driver of node %s cannot front node %s", d.node, key)
	}
	c := *d
	c.node = key
	c.logger = d.logger.With("node", key)
	return &c, nil
}

// HostInfo implements virt.Driver. A scoped driver fingerprints its node
// as Nova's Ironic driver does: one unit of the node's custom resource
// class, zero VCPU, MEMORY_MB and DISK_GB (so no virtual flavor lands on
// it), and no unit at all while the node cannot take an instance. The
// driver of every node reports their sum, with the standard classes
// from the nodes' properties.
func (d *Driver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	list, err := d.listNodes(ctx, nodes.ListOpts{})
	if err != nil {
		return nil, err
	}
	if d.node != "" {
		if len(list) == 0 {
			return nil, fmt.Errorf("ironic: node %s not found (or not of resource class prefix %q)", d.node, d.cfg.ResourceClassPrefix)
		}
		return nodeInfo(&list[0]), nil
	}
	hi := &virt.HostInfo{Hostname: "ironic", HypervisorType: "ironic", Arch: "x86_64",
		CustomResources: map[string]int64{}, Attributes: map[string]string{"ironic_nodes": fmt.Sprint(len(list))}}
	for i := range list {
		ni := nodeInfo(&list[i])
		for class, n := range ni.CustomResources {
			hi.CustomResources[class] += n
		}
		hi.VCPUs += intProp(list[i].Properties, "cpus")
		hi.MemoryMB += intProp(list[i].Properties, "memory_mb")
		hi.DiskGB += intProp(list[i].Properties, "local_gb")
		if ni.Arch != "" {
			hi.Arch = ni.Arch
		}
	}
	return hi, nil
}

// nodeInfo is one node's fingerprint.
func nodeInfo(n *nodes.Node) *virt.HostInfo {
	name := n.Name
	if name == "" {
		name = n.UUID
	}
	hi := &virt.HostInfo{
		Hostname: name, HypervisorType: "ironic", Arch: "x86_64",
		CustomResources: map[string]int64{},
		Attributes: map[string]string{
			"ironic_node": n.UUID, "ironic_resource_class": n.ResourceClass,
		},
		Traits: append([]string(nil), n.Traits...),
	}
	if arch, _ := n.Properties["cpu_arch"].(string); arch != "" {
		hi.Arch = arch
	}
	if n.Maintenance {
		hi.Attributes["ironic_maintenance"] = "true"
	}
	if class := resourceClass(n.ResourceClass); class != "" {
		// An occupied node keeps its unit: its instance's allocation
		// consumes it.
		if schedulable(n) || n.InstanceUUID != "" {
			hi.CustomResources[class] = 1
		} else {
			hi.CustomResources[class] = 0
		}
	}
	return hi
}

// GetInfo implements virt.Driver.
func (d *Driver) GetInfo(ctx context.Context, id string) (*virt.InstanceInfo, error) {
	n, err := d.nodeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	return &virt.InstanceInfo{ID: id, PowerState: powerState(n), DriverRef: n.UUID}, nil
}

// ListInstances implements virt.Driver: the instance uuids of the nodes.
func (d *Driver) ListInstances(ctx context.Context) ([]string, error) {
	list, err := d.listNodes(ctx, nodes.ListOpts{Associated: true})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range list {
		if n.InstanceUUID != "" {
			out = append(out, n.InstanceUUID)
		}
	}
	return out, nil
}

// PowerOn implements virt.Driver.
func (d *Driver) PowerOn(ctx context.Context, id string) error {
	n, err := d.nodeOf(ctx, id)
	if err != nil {
		return err
	}
	if err := d.setPower(ctx, n.UUID, nodes.PowerOn, 0); err != nil {
		return err
	}
	return d.waitPower(ctx, n.UUID, powerOn)
}

// PowerOff implements virt.Driver: a soft power off bounded by timeout,
// then a hard one if the node is still on.
func (d *Driver) PowerOff(ctx context.Context, id string, timeout time.Duration) error {
	n, err := d.nodeOf(ctx, id)
	if err != nil {
		return err
	}
	if n.PowerState == powerOff && n.TargetPowerState == "" {
		return nil
	}
	if timeout > 0 {
		soft, cancel := context.WithTimeout(ctx, timeout+d.cfg.PollInterval)
		err := d.setPower(soft, n.UUID, nodes.SoftPowerOff, timeout)
		if err == nil {
			err = d.waitPower(soft, n.UUID, powerOff)
		}
		cancel()
		if err == nil {
			return nil
		}
		d.logger.Warn("soft power off did not finish; powering off", "node", n.UUID, "error", err)
	}
	if err := d.setPower(ctx, n.UUID, nodes.PowerOff, 0); err != nil {
		return err
	}
	return d.waitPower(ctx, n.UUID, powerOff)
}

// Reboot implements virt.Driver.
func (d *Driver) Reboot(ctx context.Context, id string, hard bool) error {
	n, err := d.nodeOf(ctx, id)
	if err != nil {
		return err
	}
	target := nodes.SoftRebooting
	if hard {
		target = nodes.Rebooting
	}
	if err := d.setPower(ctx, n.UUID, target, 0); err != nil {
		return err
	}
	return d.waitPower(ctx, n.UUID, powerOn)
}

// Destroy implements virt.Driver: it tears the instance's node down and
// waits until Ironic has let go of the instance (the node then cleans
// itself back to available). A node claimed but never deployed is just
// released.
func (d *Driver) Destroy(ctx context.Context, id string) error {
	n, err := d.nodeOf(ctx, id)
	if errors.Is(err, virt.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return d.teardown(ctx, id, n)
}

// teardown undeploys node n of instance id (or releases it).
func (d *Driver) teardown(ctx context.Context, id string, n *nodes.Node) error {
	// Let a transition in progress (deploying, deleting) settle first.
	n, err := d.waitNode(ctx, n.UUID, func(n *nodes.Node) (bool, error) {
		return n.TargetProvisionState == "" || n.InstanceUUID != id, nil
	})
	if err != nil {
		return err
	}
	if n.InstanceUUID != id {
		return nil
	}
	switch n.ProvisionState {
	case stateAvailable, string(nodes.Manageable), string(nodes.Enroll), stateCleaning, stateCleanWait, stateCleanFail:
		// Claimed, never deployed (or already torn down): release.
		return d.release(ctx, n.UUID)
	}
	d.logger.Info("tearing down node", "instance", id, "node", n.UUID, "state", n.ProvisionState)
	if err := d.setProvision(ctx, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted}); err != nil {
		return err
	}
	_, err = d.waitNode(ctx, n.UUID, func(n *nodes.Node) (bool, error) {
		switch {
		case n.InstanceUUID != id:
			return true, nil
		case n.ProvisionState == stateError && n.TargetProvisionState == "":
			return true, fmt.Errorf("ironic: tear down of node %s failed: %s", n.UUID, n.LastError)
		}
		return false, nil
	})
	return err
}

// release clears a node's instance_uuid and instance_info.
func (d *Driver) release(ctx context.Context, nodeID string) error {
	return d.patchNode(ctx, nodeID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/instance_uuid"},
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/instance_info", Value: map[string]any{}},
	})
}

// flavorClass returns the custom resource class a spec's flavor asks for
// (resources:CUSTOM_*=N), or "".
func flavorClass(spec *virt.InstanceSpec) string {
	for k, v := range spec.ExtraSpecs {
		if class, ok := strings.CutPrefix(k, "resources:CUSTOM_"); ok && v != "0" {
			return "CUSTOM_" + class
		}
	}
	return ""
}
