package vmware

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/stratus-cloud/stratus/virt"
)

// Spawn implements virt.Driver: an instance that has a VM already is
// powered on if needed and returned; otherwise a VM is created (or
// cloned from a template), given its root disk and powered on. A spawn
// that fails destroys the VM it made.
func (d *Driver) Spawn(ctx context.Context, spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	if err := validateSpec(spec); err != nil {
		return nil, err
	}
	info, err := d.GetInfo(ctx, spec.ID)
	switch {
	case err == nil:
		if info.PowerState != virt.PowerRunning {
			if err := d.PowerOn(ctx, spec.ID); err != nil {
				return nil, err
			}
		}
		return d.GetInfo(ctx, spec.ID)
	case !errors.Is(err, virt.ErrNotFound):
		return nil, err
	}
	if err := d.create(ctx, spec); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultShutdownTimeout)
		defer cancel()
		if derr := d.Destroy(cctx, spec.ID); derr != nil {
			d.logger.Error("removing a failed spawn failed", "instance", spec.ID, "error", derr)
		}
		d.removeFolder(cctx, spec.ID)
		return nil, err
	}
	return d.GetInfo(ctx, spec.ID)
}

// validateSpec rejects specs no VM could run.
func validateSpec(spec *virt.InstanceSpec) error {
	switch {
	case spec == nil || spec.ID == "":
		return errors.New("vmware: spawn: the spec has no instance id")
	case spec.VCPUs <= 0 || spec.MemoryMB <= 0:
		return fmt.Errorf("vmware: spawn %s: vcpus (%d) and memory (%d MiB) must be positive", spec.ID, spec.VCPUs, spec.MemoryMB)
	case spec.RootGB < 0 || spec.EphemeralGB < 0 || spec.SwapMB < 0:
		return fmt.Errorf("vmware: spawn %s: negative disk size", spec.ID)
	}
	return nil
}

// create makes and powers on the VM of spec.
func (d *Driver) create(ctx context.Context, spec *virt.InstanceSpec) error {
	d.createMu.Lock()
	defer d.createMu.Unlock()
	i, err := d.session(ctx)
	if err != nil {
		return err
	}
	// A concurrent spawn of the same instance may have won the lock.
	if vm, err := i.findVM(ctx, spec.ID); err != nil || vm != nil {
		return err
	}
	port, err := d.freeVNCPort(ctx, i)
	if err != nil {
		return err
	}
	cs := configSpec(spec, port)
	var vm *object.VirtualMachine
	if tmpl := spec.ImageProperties[TemplateProperty]; tmpl != "" {
		vm, err = d.clone(ctx, i, spec, tmpl, cs)
	} else {
		vm, err = d.createVM(ctx, i, spec, cs)
	}
	if err != nil {
		return err
	}
	d.logger.Info("created VM", "instance", spec.ID, "vm", vm.Reference().Value, "vnc_port", port)
	t, err := vm.PowerOn(ctx)
	return wait(ctx, "power on "+spec.ID, t, err)
}

// configSpec is the VM's identity, size and console.
func configSpec(spec *virt.InstanceSpec, vncPort int) types.VirtualMachineConfigSpec {
	guest := spec.ImageProperties[GuestIDProperty]
	if guest == "" {
		guest = DefaultGuestID
	}
	return types.VirtualMachineConfigSpec{
		Name: spec.ID, InstanceUuid: spec.ID, GuestId: guest,
		Annotation: fmt.Sprintf("stratus instance %s (%s)", spec.Name, spec.ID),
		NumCPUs:    int32(spec.VCPUs), MemoryMB: int64(spec.MemoryMB),
		ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: keyInstanceID, Value: spec.ID},
			&types.OptionValue{Key: keyVNCEnabled, Value: "true"},
			&types.OptionValue{Key: keyVNCPort, Value: strconv.Itoa(vncPort)},
		},
	}
}

// freeVNCPort picks the lowest port of the range no VM of ours uses.
func (d *Driver) freeVNCPort(ctx context.Context, i *inv) (int, error) {
	vms, err := d.ourVMs(ctx, i)
	if err != nil {
		return 0, err
	}
	used := make(map[int]bool, len(vms))
	for _, vm := range vms {
		if p, err := strconv.Atoi(extraConfig(&vm, keyVNCPort)); err == nil {
			used[p] = true
		}
	}
	for p := d.cfg.VNCPortMin; p < d.cfg.VNCPortMin+d.cfg.VNCPortTotal; p++ {
		if !used[p] {
			return p, nil
		}
	}
	return 0, fmt.Errorf("vmware: all %d VNC ports from %d are in use", d.cfg.VNCPortTotal, d.cfg.VNCPortMin)
}

// createVM creates a VM with a SCSI controller and its disks: the root
// disk from the image file (or empty), ephemeral and swap empty.
func (d *Driver) createVM(ctx context.Context, i *inv, spec *virt.InstanceSpec, cs types.VirtualMachineConfigSpec) (*object.VirtualMachine, error) {
	cs.Files = &types.VirtualMachineFileInfo{VmPathName: i.ds.Path(path.Join(spec.ID, spec.ID+".vmx"))}
	var devs object.VirtualDeviceList
	ctrl, err := devs.CreateSCSIController("pvscsi")
	if err != nil {
		return nil, fmt.Errorf("vmware: spawn %s: %w", spec.ID, err)
	}
	devs = append(devs, ctrl)
	cs.DeviceChange = append(cs.DeviceChange, &types.VirtualDeviceConfigSpec{
		Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: ctrl,
	})
	c := ctrl.(types.BaseVirtualController)
	rootKB := int64(spec.RootGB) << 20
	if src := imageFile(spec); src != "" {
		root, kb, err := d.copyImage(ctx, i, spec, src, rootKB)
		if err != nil {
			return nil, err
		}
		disk := devs.CreateDisk(c, i.ds.Reference(), root)
		disk.CapacityInKB = kb
		devs = append(devs, disk)
		cs.DeviceChange = append(cs.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: disk,
		})
		rootKB = 0
	}
	for _, kb := range []int64{rootKB, int64(spec.EphemeralGB) << 20, int64(spec.SwapMB) << 10} {
		if kb <= 0 {
			continue
		}
		disk := devs.CreateDisk(c, i.ds.Reference(), "")
		disk.CapacityInKB = kb
		devs = append(devs, disk)
		cs.DeviceChange = append(cs.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate, Device: disk,
		})
	}
	cd, err := d.configDrive(ctx, i, spec, devs)
	if err != nil {
		return nil, err
	}
	cs.DeviceChange = append(cs.DeviceChange, cd...)
	t, err := i.folder.CreateVM(ctx, cs, i.pool, nil)
	if err != nil {
		return nil, fmt.Errorf("vmware: create VM of %s: %w", spec.ID, err)
	}
	res, err := t.WaitForResult(ctx)
	if err != nil {
		return nil, fmt.Errorf("vmware: create VM of %s: %w", spec.ID, err)
	}
	ref, ok := res.Result.(types.ManagedObjectReference)
	if !ok {
		return nil, fmt.Errorf("vmware: create VM of %s: unexpected task result %T", spec.ID, res.Result)
	}
	return object.NewVirtualMachine(i.vc, ref), nil
}

// uploadImage creates the cached VMDK of an image and uploads the raw
// file as its flat extent.
func (d *Driver) uploadImage(ctx context.Context, i *inv, vdm *object.VirtualDiskManager, src, cached string, size int64) error {
	fm := object.NewFileManager(i.vc)
	if err := fm.MakeDirectory(ctx, i.ds.Path(path.Dir(cached)), i.dc, true); err != nil {
		return fmt.Errorf("vmware: make image cache folder: %w", err)
	}
	spec := &types.FileBackedVirtualDiskSpec{
		VirtualDiskSpec: types.VirtualDiskSpec{
			DiskType: string(types.VirtualDiskTypePreallocated), AdapterType: string(types.VirtualDiskAdapterTypeLsiLogic),
		},
		CapacityKb: (size + 1023) >> 10,
	}
	t, err := vdm.CreateVirtualDisk(ctx, i.ds.Path(cached), i.dc, spec)
	if err := wait(ctx, "create cached image disk "+cached, t, err); err != nil {
		return err
	}
	flat := cached[:len(cached)-len(".vmdk")] + "-flat.vmdk"
	d.logger.Info("uploading image to the datastore", "file", src, "path", flat, "bytes", size)
	if err := i.ds.UploadFile(ctx, src, flat, uploadParams(size)); err != nil {
		// Do not leave a half-uploaded image to be copied later.
		t, derr := vdm.DeleteVirtualDisk(context.WithoutCancel(ctx), i.ds.Path(cached), i.dc)
		_ = wait(context.WithoutCancel(ctx), "delete "+cached, t, derr)
		return fmt.Errorf("vmware: upload image %s: %w", src, err)
	}
	return nil
}

// clone makes the VM as a full clone of a template VM.
func (d *Driver) clone(ctx context.Context, i *inv, spec *virt.InstanceSpec, tmpl string, cs types.VirtualMachineConfigSpec) (*object.VirtualMachine, error) {
	t, err := d.finder(i).VirtualMachine(ctx, tmpl)
	if err != nil {
		return nil, fmt.Errorf("vmware: template %q of %s: %w", tmpl, spec.ID, err)
	}
	pool, ds := i.pool.Reference(), i.ds.Reference()
	task, err := t.Clone(ctx, i.folder, spec.ID, types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: &pool, Datastore: &ds},
		Config:   &cs,
	})
	if err != nil {
		return nil, fmt.Errorf("vmware: clone %q for %s: %w", tmpl, spec.ID, err)
	}
	res, err := task.WaitForResult(ctx)
	if err != nil {
		return nil, fmt.Errorf("vmware: clone %q for %s: %w", tmpl, spec.ID, err)
	}
	ref, ok := res.Result.(types.ManagedObjectReference)
	if !ok {
		return nil, fmt.Errorf("vmware: clone for %s: unexpected task result %T", spec.ID, res.Result)
	}
	vm := object.NewVirtualMachine(i.vc, ref)
	if spec.RootGB > 0 {
		if err := d.growRoot(ctx, vm, int64(spec.RootGB)<<20); err != nil {
			return vm, err
		}
	}
	return vm, nil
}

// Resize implements virt.Resizer: reconfigure vCPUs and memory, and grow
// the root disk, with the VM powered off (and back on if it was on).
func (d *Driver) Resize(ctx context.Context, id string, spec *virt.InstanceSpec) error {
	if spec == nil {
		return fmt.Errorf("vmware: resize %s: no spec", id)
	}
	s := *spec
	s.ID = id
	if err := validateSpec(&s); err != nil {
		return err
	}
	_, st, err := d.lookup(ctx, id)
	if err != nil {
		return err
	}
	if st.power == virt.PowerSuspend {
		return fmt.Errorf("vmware: resize %s: the VM is suspended", id)
	}
	running := st.power == virt.PowerRunning
	if running {
		if err := d.PowerOff(ctx, id, DefaultShutdownTimeout); err != nil {
			return err
		}
	}
	t, err := st.vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{NumCPUs: int32(s.VCPUs), MemoryMB: int64(s.MemoryMB)})
	if err := wait(ctx, "reconfigure "+id, t, err); err != nil {
		return err
	}
	if s.RootGB > 0 {
		if err := d.growRoot(ctx, st.vm, int64(s.RootGB)<<20); err != nil {
			return err
		}
	}
	d.logger.Info("resized VM", "instance", id, "vcpus", s.VCPUs, "memory_mb", s.MemoryMB, "root_gb", s.RootGB)
	if running {
		t, err := st.vm.PowerOn(ctx)
		return wait(ctx, "power on "+id, t, err)
	}
	return nil
}

// growRoot grows the VM's first disk to kb if it is smaller; disks never
// shrink.
func (d *Driver) growRoot(ctx context.Context, vm *object.VirtualMachine, kb int64) error {
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.hardware"}, &m); err != nil {
		return fmt.Errorf("vmware: read disks: %w", err)
	}
	disks := object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 {
		return nil
	}
	disk := disks[0].(*types.VirtualDisk)
	if disk.CapacityInKB >= kb {
		return nil
	}
	disk.CapacityInKB, disk.CapacityInBytes = kb, kb<<10
	t, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: disk},
	}})
	return wait(ctx, "grow root disk", t, err)
}
