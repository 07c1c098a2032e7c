package vmware

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/stratus-cloud/stratus/virt"
)

// Driver drives the VMs of one vCenter cluster.
type Driver struct {
	cfg    Config
	logger hclog.Logger

	// mu guards the session.
	mu  sync.Mutex
	inv *inv
	// createMu serializes creations, so two spawns never pick the same
	// VNC port or upload the same image at once.
	createMu sync.Mutex
}

var (
	_ virt.Driver         = (*Driver)(nil)
	_ virt.Suspender      = (*Driver)(nil)
	_ virt.Resizer        = (*Driver)(nil)
	_ virt.RemoteConsoler = (*Driver)(nil)
)

// New checks cfg and returns a driver. It does not reach vCenter: the
// first call logs in.
func New(cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg, logger: cfg.Logger.Named("vmware")}, nil
}

// Close logs out of vCenter.
func (d *Driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return d.logout(ctx)
}

// Name implements virt.Driver.
func (d *Driver) Name() string { return "vmware" }

// Capabilities implements virt.Driver.
func (d *Driver) Capabilities() virt.Capabilities {
	return virt.Capabilities{Suspend: true, Resize: true, RemoteConsole: true}
}

// HostInfo implements virt.Driver: the cluster as one host, with the sum
// of its connected ESXi hosts' threads and memory and the datastore's
// capacity.
func (d *Driver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	i, err := d.session(ctx)
	if err != nil {
		return nil, err
	}
	var cl mo.ClusterComputeResource
	if err := i.cluster.Properties(ctx, i.cluster.Reference(), []string{"name", "host"}, &cl); err != nil {
		return nil, fmt.Errorf("vmware: read cluster: %w", err)
	}
	hi := &virt.HostInfo{
		Hostname: cl.Name, Arch: "x86_64", HypervisorType: "VMware vCenter Server",
		HypervisorVersion: i.vc.ServiceContent.About.Version,
		Attributes:        map[string]string{"vmware_datacenter": i.dc.Name(), "vmware_cluster": cl.Name},
	}
	if len(cl.Host) > 0 {
		var hosts []mo.HostSystem
		pc := property.DefaultCollector(i.vc)
		if err := pc.Retrieve(ctx, cl.Host, []string{"summary.hardware", "runtime.connectionState", "runtime.inMaintenanceMode"}, &hosts); err != nil {
			return nil, fmt.Errorf("vmware: read the cluster's hosts: %w", err)
		}
		for _, h := range hosts {
			if h.Runtime.ConnectionState != types.HostSystemConnectionStateConnected || h.Runtime.InMaintenanceMode {
				continue
			}
			if hw := h.Summary.Hardware; hw != nil {
				hi.VCPUs += int64(hw.NumCpuThreads)
				hi.MemoryMB += hw.MemorySize >> 20
				if hi.CPUModel == "" {
					hi.CPUModel = hw.CpuModel
				}
			}
		}
	}
	var ds mo.Datastore
	if err := i.ds.Properties(ctx, i.ds.Reference(), []string{"summary"}, &ds); err != nil {
		return nil, fmt.Errorf("vmware: read datastore: %w", err)
	}
	hi.DiskGB = ds.Summary.Capacity >> 30
	hi.Attributes["vmware_datastore"] = ds.Summary.Name
	return hi, nil
}

// vmState is what the driver reads of a VM.
type vmState struct {
	vm    *object.VirtualMachine
	mo    mo.VirtualMachine
	power int
}

// props are the VM properties vmState reads.
var props = []string{"name", "config.instanceUuid", "config.extraConfig", "config.hardware", "runtime.powerState", "runtime.host"}

// lookup finds instance id's VM and reads it, or returns ErrNotFound.
func (d *Driver) lookup(ctx context.Context, id string) (*inv, *vmState, error) {
	i, err := d.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	vm, err := i.findVM(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if vm == nil {
		return nil, nil, fmt.Errorf("vmware: instance %s: %w", id, virt.ErrNotFound)
	}
	s := &vmState{vm: vm}
	if err := vm.Properties(ctx, vm.Reference(), props, &s.mo); err != nil {
		if isNotFound(err) {
			return nil, nil, fmt.Errorf("vmware: instance %s: %w", id, virt.ErrNotFound)
		}
		return nil, nil, fmt.Errorf("vmware: read VM of instance %s: %w", id, err)
	}
	s.power = powerState(s.mo.Runtime.PowerState)
	return i, s, nil
}

// powerState maps vSphere's power state to ours.
func powerState(p types.VirtualMachinePowerState) int {
	switch p {
	case types.VirtualMachinePowerStatePoweredOn:
		return virt.PowerRunning
	case types.VirtualMachinePowerStatePoweredOff:
		return virt.PowerShutdown
	case types.VirtualMachinePowerStateSuspended:
		return virt.PowerSuspend
	default:
		return virt.PowerNoState
	}
}

// extraConfig reads one extraConfig value.
func extraConfig(vm *mo.VirtualMachine, key string) string {
	if vm.Config == nil {
		return ""
	}
	for _, o := range vm.Config.ExtraConfig {
		if v := o.GetOptionValue(); v != nil && v.Key == key {
			s, _ := v.Value.(string)
			return s
		}
	}
	return ""
}

// GetInfo implements virt.Driver.
func (d *Driver) GetInfo(ctx context.Context, id string) (*virt.InstanceInfo, error) {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	return &virt.InstanceInfo{ID: id, PowerState: s.power, DriverRef: s.vm.Reference().Value}, nil
}

// ourVMs lists the VMs of the cluster that carry stratus.instance_id.
func (d *Driver) ourVMs(ctx context.Context, i *inv) ([]mo.VirtualMachine, error) {
	var hosts mo.ClusterComputeResource
	if err := i.cluster.Properties(ctx, i.cluster.Reference(), []string{"host"}, &hosts); err != nil {
		return nil, fmt.Errorf("vmware: read cluster: %w", err)
	}
	v, err := view.NewManager(i.vc).CreateContainerView(ctx, i.dc.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, fmt.Errorf("vmware: list VMs: %w", err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var all []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, props, &all); err != nil {
		return nil, fmt.Errorf("vmware: list VMs: %w", err)
	}
	var out []mo.VirtualMachine
	for _, vm := range all {
		if extraConfig(&vm, keyInstanceID) == "" || vm.Runtime.Host == nil || !slices.Contains(hosts.Host, *vm.Runtime.Host) {
			continue
		}
		out = append(out, vm)
	}
	return out, nil
}

// ListInstances implements virt.Driver: the instance ids of the
// cluster's VMs this driver made.
func (d *Driver) ListInstances(ctx context.Context) ([]string, error) {
	i, err := d.session(ctx)
	if err != nil {
		return nil, err
	}
	vms, err := d.ourVMs(ctx, i)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, vm := range vms {
		ids = append(ids, extraConfig(&vm, keyInstanceID))
	}
	slices.Sort(ids)
	return ids, nil
}

// wait runs a task to completion. A vSphere fault saying the VM is in
// the wrong state for the task is a virt.ErrInvalidState.
func wait(ctx context.Context, what string, t *object.Task, err error) error {
	if err == nil {
		err = t.Wait(ctx)
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("vmware: %s: %w", what, err)
	if isInvalidState(err) {
		// vSphere refused because of the VM's state (it changed since
		// the lookup): the caller's conflict, not a backend failure.
		return virt.AsInvalidState(err)
	}
	return err
}

// PowerOn implements virt.Driver; a suspended VM resumes.
func (d *Driver) PowerOn(ctx context.Context, id string) error {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	if s.power == virt.PowerRunning {
		return nil
	}
	t, err := s.vm.PowerOn(ctx)
	return wait(ctx, "power on "+id, t, err)
}

// PowerOff implements virt.Driver: a guest shutdown through VMware Tools
// bounded by timeout, then a hard power off.
func (d *Driver) PowerOff(ctx context.Context, id string, timeout time.Duration) error {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	if s.power == virt.PowerShutdown {
		return nil
	}
	if s.power == virt.PowerRunning && timeout > 0 {
		if err := s.vm.ShutdownGuest(ctx); err == nil {
			wctx, cancel := context.WithTimeout(ctx, timeout)
			err = s.vm.WaitForPowerState(wctx, types.VirtualMachinePowerStatePoweredOff)
			cancel()
			if err == nil {
				return nil
			}
		}
		d.logger.Debug("guest shutdown did not finish; powering off", "instance", id)
	}
	t, err := s.vm.PowerOff(ctx)
	if err := wait(ctx, "power off "+id, t, err); err != nil {
		// It may have stopped meanwhile.
		if st, _ := s.vm.PowerState(ctx); st == types.VirtualMachinePowerStatePoweredOff {
			return nil
		}
		return err
	}
	return nil
}

// Reboot implements virt.Driver: soft asks VMware Tools (falling back to
// a reset when they do not run), hard resets.
func (d *Driver) Reboot(ctx context.Context, id string, hard bool) error {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	if s.power != virt.PowerRunning {
		t, err := s.vm.PowerOn(ctx)
		return wait(ctx, "power on "+id, t, err)
	}
	if !hard {
		if err := s.vm.RebootGuest(ctx); err == nil {
			return nil
		}
	}
	t, err := s.vm.Reset(ctx)
	return wait(ctx, "reset "+id, t, err)
}

// Destroy implements virt.Driver: power off and delete the VM with its
// files.
func (d *Driver) Destroy(ctx context.Context, id string) error {
	_, s, err := d.lookup(ctx, id)
	if errors.Is(err, virt.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.power != virt.PowerShutdown {
		t, err := s.vm.PowerOff(ctx)
		if err := wait(ctx, "power off "+id, t, err); err != nil && !isNotFound(err) {
			if st, _ := s.vm.PowerState(ctx); st != types.VirtualMachinePowerStatePoweredOff {
				return err
			}
		}
	}
	t, err := s.vm.Destroy(ctx)
	if err := wait(ctx, "destroy "+id, t, err); err != nil && !isNotFound(err) {
		return err
	}
	d.logger.Info("destroyed VM", "instance", id)
	return nil
}

// Suspend implements virt.Suspender.
func (d *Driver) Suspend(ctx context.Context, id string) error {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	switch s.power {
	case virt.PowerSuspend:
		return nil
	case virt.PowerRunning:
	default:
		return virt.AsInvalidState(fmt.Errorf("vmware: suspend %s: the VM is not running", id))
	}
	t, err := s.vm.Suspend(ctx)
	return wait(ctx, "suspend "+id, t, err)
}

// Resume implements virt.Suspender.
func (d *Driver) Resume(ctx context.Context, id string) error {
	_, s, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	switch s.power {
	case virt.PowerRunning:
		return nil
	case virt.PowerSuspend:
	default:
		return virt.AsInvalidState(fmt.Errorf("vmware: resume %s: the VM is not suspended", id))
	}
	t, err := s.vm.PowerOn(ctx)
	return wait(ctx, "resume "+id, t, err)
}

// RemoteConsole implements virt.RemoteConsoler: VNC on the ESXi host
// that runs the VM, at the port in its extraConfig.
func (d *Driver) RemoteConsole(ctx context.Context, id string, kind string) (*virt.Console, error) {
	i, s, err := d.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if kind != "vnc" {
		return nil, fmt.Errorf("vmware: %s console: %w", kind, virt.ErrNotSupported)
	}
	port, err := strconv.Atoi(extraConfig(&s.mo, keyVNCPort))
	if err != nil || extraConfig(&s.mo, keyVNCEnabled) != "true" || s.mo.Runtime.Host == nil {
		return nil, fmt.Errorf("vmware: instance %s has no VNC console: %w", id, virt.ErrNotSupported)
	}
	var h mo.HostSystem
	if err := property.DefaultCollector(i.vc).RetrieveOne(ctx, *s.mo.Runtime.Host, []string{"name"}, &h); err != nil {
		return nil, fmt.Errorf("vmware: read the host of %s: %w", id, err)
	}
	return &virt.Console{Kind: "vnc", Host: h.Name, Port: port}, nil
}
