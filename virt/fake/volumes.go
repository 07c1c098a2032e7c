package fake

import (
	"context"
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/virt"
)

// AttachVolume records a hot-plugged volume on the instance (Volumes
// shows it); the fake never opens the volume's path or network source.
// Attaching a volume id already attached from the same path (or NBD
// export) is a no-op, from another an error; a suspended instance refuses (virt.ErrInvalidState), as
// libvirt's does. Attached volumes are not persisted: a reopened driver
// has none, as a restarted hypervisor would until they are attached
// again.
func (d *Driver) AttachVolume(ctx context.Context, id string, vol *virt.Volume) error {
	if vol == nil || vol.ID == "" || (vol.Path == "") == (vol.Network == nil) {
		return fmt.Errorf("fake AttachVolume %q: a volume needs an id and either a path or a network source", id)
	}
	return d.transition(ctx, "AttachVolume", id, func(in *instance) error {
		if i := slices.IndexFunc(in.volumes, func(v virt.Volume) bool { return v.ID == vol.ID }); i >= 0 {
			if old := in.volumes[i]; old.Path == vol.Path && (old.Network == nil) == (vol.Network == nil) &&
				(old.Network == nil || old.Network.Name == vol.Network.Name) {
				return nil
			}
			return fmt.Errorf("volume %s is already attached from elsewhere", vol.ID)
		}
		if in.power == virt.PowerSuspend {
			return virt.InvalidState("attach a volume to", in.power)
		}
		in.volumes = append(in.volumes, *vol)
		return nil
	})
}

// DetachVolume forgets an attached volume; one the instance does not
// have fails with virt.ErrVolumeNotAttached.
func (d *Driver) DetachVolume(ctx context.Context, id string, volumeID string) error {
	return d.transition(ctx, "DetachVolume", id, func(in *instance) error {
		i := slices.IndexFunc(in.volumes, func(v virt.Volume) bool { return v.ID == volumeID })
		if i < 0 {
			return fmt.Errorf("%w: %s", virt.ErrVolumeNotAttached, volumeID)
		}
		in.volumes = slices.Delete(in.volumes, i, i+1)
		return nil
	})
}

// ResizeVolume records the size an attached volume's (or the root
// volume's) disk grew to (VolumeSize shows it); a smaller size than the one recorded is a
// no-op, and a volume the instance does not have fails with
// virt.ErrVolumeNotAttached. Network disks served over NBD fail as
// QEMU's do: an NBD node cannot grow.
func (d *Driver) ResizeVolume(ctx context.Context, id, volumeID string, size int64) error {
	return d.transition(ctx, "ResizeVolume", id, func(in *instance) error {
		var vol *virt.Volume
		if i := slices.IndexFunc(in.volumes, func(v virt.Volume) bool { return v.ID == volumeID }); i >= 0 {
			vol = &in.volumes[i]
		} else if rv := in.spec.RootVolume; rv != nil && rv.ID == volumeID {
			vol = rv
		}
		if vol == nil {
			return fmt.Errorf("%w: %s", virt.ErrVolumeNotAttached, volumeID)
		}
		if size <= in.volumeSizes[volumeID] {
			return nil
		}
		if n := vol.Network; n != nil && n.Protocol == virt.NetworkNBD {
			return fmt.Errorf("fake ResizeVolume %q: volume %s: Cannot grow NBD nodes", id, volumeID)
		}
		if in.volumeSizes == nil {
			in.volumeSizes = map[string]int64{}
		}
		in.volumeSizes[volumeID] = size
		return nil
	})
}

// VolumeSize returns the size ResizeVolume last gave a volume's disk of
// the instance, 0 when it gave none.
func (d *Driver) VolumeSize(id, volumeID string) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if in, ok := d.instances[id]; ok {
		return in.volumeSizes[volumeID]
	}
	return 0
}

// Volumes returns the volumes attached to an instance, in attach order
// (nil for an unknown instance).
func (d *Driver) Volumes(id string) []virt.Volume {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return nil
	}
	return slices.Clone(in.volumes)
}

// RootVolume returns the volume an instance boots from (the spawn's
// InstanceSpec.RootVolume), nil for an unknown instance or one booted
// from an image. The fake never opens its path.
func (d *Driver) RootVolume(id string) *virt.Volume {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok || in.spec.RootVolume == nil {
		return nil
	}
	rv := cloneVolume(*in.spec.RootVolume)
	return &rv
}
