package server

import (
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// A create with block devices (boot from volume) is placed by the
// scheduler like any other when every volume can be reached from any
// host: an RBD image through Ceph, a file through its storage host's
// NBD export (storage nbd_address). A volume whose storage host serves
// no exports is reached only as its file there, so the instance is
// pinned to that host, as an admin's target host would pin it, and all
// its file volumes must be there. The FSM attaches the volumes in the
// entry that creates the instance and refuses the create if one was
// taken meanwhile.

// bootVolumes checks a create's block devices and, when one of them is
// reached only on its storage host, pins its placement to that host; a
// root volume made from an image gives the instance that image's
// properties (hw_disk_bus, …), as Nova takes them from the volume's
// image metadata. The create has no image then.
func (s *Server) bootVolumes(state *fsm.StateStore, args *structs.InstanceCreateRequest, v *createChecks) error {
	all := allBlockDevices(args)
	if len(all) == 0 {
		return nil
	}
	if l, _ := s.ClusterFSMLevel(); l < structs.FSMLevelRemoteBootVolume {
		return structs.Errorf(structs.KindUnavailable, "servers can boot from volumes once every server is upgraded (%s, the cluster is at %s)",
			structs.FSMLevelRemoteBootVolume, l)
	}
	if (v.count > 1 && slices.ContainsFunc(args.BlockDevices, existingVolume)) || (len(args.BlockDeviceSets) > 0 && len(args.BlockDeviceSets) != v.count) {
		return structs.Errorf(structs.KindInvalid, "Cannot attach one or more volumes to multiple instances")
	}
	seen := map[string]bool{}
	var files []*structs.Volume // file volumes whose storage host serves no exports
	var local map[string]bool   // the hosts of file volumes
	for _, bd := range all {
		if !existingVolume(bd) {
			continue // made by the create (boot_volume_build.go)
		}
		if seen[bd.VolumeID] {
			return structs.Errorf(structs.KindInvalid, "Cannot attach one or more volumes to multiple instances")
		}
		seen[bd.VolumeID] = true
		vol, err := state.Volume(nil, bd.VolumeID)
		if err != nil {
			return err
		}
		if vol == nil || vol.ProjectID != args.ProjectID {
			return structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: failed to get volume %s.", bd.VolumeID)
		}
		if vol.Status != structs.VolumeAvailable {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", vol.ID, vol.Status)
		}
		if vol.Backend != structs.VolumeBackendRBD {
			if local == nil {
				local = map[string]bool{}
			}
			local[vol.Host] = true
			if reach, err := servesExports(state, vol.Host); err != nil {
				return err
			} else if !reach {
				files = append(files, vol)
			}
		}
		if bd.BootIndex == 0 && args.ImageID == "" && vol.ImageID != "" {
			if img, err := state.ImageByID(nil, vol.ImageID); err == nil && img != nil {
				v.imageProps = maps.Clone(img.Properties)
			}
		}
	}
	if len(files) == 0 {
		return nil // every volume is reached from any host
	}
	host := files[0].Host
	if len(local) > 1 {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is kept on a storage host that serves no NBD exports (storage nbd_address), so the server must run there, and its other volumes must be kept on that host too", files[0].ID)
	}
	if v.targetHostID != "" && v.targetHostID != host {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: the server's volumes are kept on host %s, not on the host asked for", host)
	}
	v.targetHostID = host
	return nil
}

// servesExports reports whether a storage host serves its volumes to
// other hosts (an NBD server).
func servesExports(state *fsm.StateStore, hostID string) (bool, error) {
	h, err := state.HostByID(nil, hostID)
	if err != nil {
		return false, err
	}
	return h != nil && h.Attributes[structs.HostAttrStorageNBDAddress] != "", nil
}

// allBlockDevices lists every block device a create names, of all its
// instances.
func allBlockDevices(args *structs.InstanceCreateRequest) []*structs.BlockDevice {
	all := args.BlockDevices
	for _, set := range args.BlockDeviceSets {
		all = append(slices.Clip(all), set...)
	}
	return all
}

// blockDevicesFor copies the block devices of a create's instance n
// (from 1), each with a new attachment id.
func blockDevicesFor(args *structs.InstanceCreateRequest, n int) []*structs.BlockDevice {
	list := args.BlockDevices
	if len(args.BlockDeviceSets) >= n {
		list = args.BlockDeviceSets[n-1]
	}
	if len(list) == 0 {
		return nil
	}
	out := make([]*structs.BlockDevice, 0, len(list))
	for _, bd := range list {
		c := *bd
		c.AttachmentID, c.Path = uuid.NewString(), ""
		if bd.BootIndex != 0 {
			c.Device = bd.Device
		} else {
			c.Device = ""
		}
		out = append(out, &c)
	}
	return out
}

// bootsFromVolume reports whether a create names a root volume (boot
// index 0), which stands for its image.
func bootsFromVolume(args *structs.InstanceCreateRequest) bool {
	for _, bd := range allBlockDevices(args) {
		if bd.BootIndex == 0 {
			return true
		}
	}
	return false
}
