package nova

import (
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// Boot from volume. The volumes a create maps (destination volume)
// are checked here as Nova's API checks them: an existing volume must
// be available (and bootable for boot index 0), a snapshot must exist.
// The create then names them (InstanceCreateRequest.BlockDevices): an
// existing volume by its id, an image, a snapshot or nothing (blank) as
// a volume to make. The servers make those in the entry that creates
// the server, which waits in BUILD until its storage host made them
// (and goes to ERROR with Nova's fault if it could not): nothing is
// left for this agent to do once the create committed.

// bootVolumes resolves a create's volume mappings into
// args.BlockDevices.
func (q *request) bootVolumes(mappings []volumeMapping, args *structs.InstanceCreateRequest) error {
	if len(mappings) == 0 {
		return nil
	}
	// Nova's _check_and_transform_bdm: an existing volume cannot go to
	// several instances; an image, a snapshot or nothing becomes each
	// instance's own volume.
	if args.Count > 1 && slices.ContainsFunc(mappings, func(m volumeMapping) bool { return m.source == "volume" }) {
		return badRequest("Cannot attach one or more volumes to multiple instances")
	}
	if _, err := q.checkVolumeMappings(mappings); err != nil {
		return err
	}
	for _, m := range mappings {
		bd := &structs.BlockDevice{BootIndex: int(m.bootIndex), Device: m.device, Tag: m.tag, DeleteOnTermination: m.deleteOnTermination}
		if m.source == "volume" {
			bd.VolumeID = m.uuid
		} else {
			bd.Source, bd.SizeGB, bd.VolumeType = m.source, int(m.size), m.volumeType
			if m.source != "blank" {
				bd.SourceID = m.uuid
			}
		}
		args.BlockDevices = append(args.BlockDevices, bd)
		if m.bootIndex == 0 {
			args.ImageID = "" // the volume is the root disk
		}
	}
	return nil
}

// checkVolumeMappings applies Nova's _validate_bdm to the volume
// mappings before anything is made (a snapshot's mapping without a
// size takes the snapshot's), and returns the storage host of the
// first existing volume or snapshot named ("" for none), next to which
// the new volumes are made: a server whose volume is kept on a host
// that serves no NBD exports runs there with all its volumes (the
// servers refuse other hosts' volumes then), and one whose volumes are
// all reached over the network (NBD, RBD) may have them anywhere.
func (q *request) checkVolumeMappings(mappings []volumeMapping) (string, error) {
	host := ""
	next := func(h string) {
		if host == "" {
			host = h
		}
	}
	for i := range mappings {
		m := &mappings[i]
		switch m.source {
		case "image":
			if m.size <= 0 {
				return "", badRequest("Block Device Mapping is Invalid: Images with destination_type 'volume' need to have a non-zero size specified")
			}
		case "blank":
			if m.size <= 0 {
				return "", badRequest("Block Device Mapping is Invalid: Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size")
			}
		case "volume":
			var out structs.SingleVolumeResponse
			if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: m.uuid, ProjectID: q.token.ProjectID}, &out); err != nil {
				if structs.KindOf(err) == structs.KindNotFound {
					return "", badRequest("Block Device Mapping is Invalid: failed to get volume %s.", m.uuid)
				}
				return "", err
			}
			v := out.Volume
			if v.Status != structs.VolumeAvailable {
				return "", badRequest("Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", v.ID, v.Status)
			}
			if m.bootIndex == 0 && !v.Bootable {
				return "", badRequest("Block Device %s is not bootable.", v.ID)
			}
			next(v.Host)
		case "snapshot":
			var out structs.SingleVolumeSnapshotResponse
			err := q.call("Volume.SnapshotGet", &structs.VolumeSnapshotSpecificRequest{SnapshotID: m.uuid, ProjectID: q.token.ProjectID}, &out)
			if err != nil {
				if structs.KindOf(err) == structs.KindNotFound {
					return "", badRequest("Block Device Mapping is Invalid: failed to get snapshot %s.", m.uuid)
				}
				return "", err
			}
			next(out.Snapshot.Host)
			if m.size <= 0 {
				m.size = int64(out.Snapshot.SizeGB) // Nova's: the snapshot's size
			}
			if err := q.checkSnapshotBootable(m, out.Snapshot); err != nil {
				return "", err
			}
		}
	}
	return host, nil
}

// checkSnapshotBootable refuses to boot from a snapshot of a volume
// that is not bootable, as Nova refuses (it reads the snapshot's
// volume); a snapshot whose volume is gone is taken as it is.
func (q *request) checkSnapshotBootable(m *volumeMapping, snap *structs.VolumeSnapshot) error {
	if m.bootIndex != 0 {
		return nil
	}
	var out structs.SingleVolumeResponse
	err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: snap.VolumeID, ProjectID: q.token.ProjectID}, &out)
	switch {
	case structs.KindOf(err) == structs.KindNotFound:
		return nil
	case err != nil:
		return err
	case !out.Volume.Bootable:
		return badRequest("Block Device %s is not bootable.", snap.VolumeID)
	}
	return nil
}

// checkVolumeRebuild applies Nova's rule for rebuilding a server booted
// from a volume and says whether the rebuild reimages that volume: from
// 2.93 it always does (reimage_boot_volume: the agent rewrites the
// volume from the image, the guest's data on it replaced; data volumes
// are untouched); below 2.93 the server is rebuilt on the volume as it
// is, and only with the image it was made from.
func (q *request) checkVolumeRebuild(inst *structs.Instance, image string) (reimage bool, err error) {
	root := inst.RootVolume()
	if root == nil {
		return false, nil
	}
	if q.atLeast(93) {
		return true, nil
	}
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: root.VolumeID, ProjectID: inst.ProjectID}, &out); err != nil {
		return false, err
	}
	if out.Volume.ImageID == image {
		return false, nil
	}
	return false, badRequest("Image %s is unacceptable: Unable to rebuild with a different image for a volume-backed server.", image)
}
