package nova

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Boot from volume. The volumes a create maps (destination volume) are
// found or made before the server is: an existing volume must be
// available (and bootable for boot index 0); an image, a snapshot or
// nothing (blank) becomes a new volume on the storage host of the
// others, as Nova's compute makes them before it spawns. The create
// then names them (InstanceCreateRequest.BlockDevices): the servers pin
// the instance to that host and attach the volumes in the entry that
// creates it. The volumes made here are deleted again when the create
// fails.

// volumeWaitLimit bounds how long a create waits for the volumes it
// made to become available (an image copied into a volume).
const volumeWaitLimit = 10 * time.Minute

// bootVolumes resolves a create's volume mappings into
// args.BlockDevices and returns the ids of the volumes it made, which
// the caller deletes when the create fails (they are deleted here when
// this fails).
func (q *request) bootVolumes(mappings []volumeMapping, args *structs.InstanceCreateRequest) (made []string, err error) {
	if len(mappings) == 0 {
		return nil, nil
	}
	// Nova's _check_and_transform_bdm: an existing volume cannot go to
	// several instances; an image, a snapshot or nothing becomes each
	// instance's own volume.
	if args.Count > 1 && slices.ContainsFunc(mappings, func(m volumeMapping) bool { return m.source == "volume" }) {
		return nil, badRequest("Cannot attach one or more volumes to multiple instances")
	}
	host, err := q.checkVolumeMappings(mappings)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			q.deleteMadeVolumes(made)
			made = nil
		}
	}()
	sets := make([][]*structs.BlockDevice, max(args.Count, 1))
	for n := range sets {
		ids := make([]string, len(mappings))
		for i, m := range mappings {
			if m.source == "volume" {
				ids[i] = m.uuid
				continue
			}
			at := host
			if m.source == "snapshot" {
				at = "" // made where its snapshot is kept
			}
			v, err := q.makeVolume(m, at)
			if err != nil {
				return made, err
			}
			made = append(made, v.ID)
			ids[i] = v.ID
			if host == "" {
				host = v.Host
			}
		}
		for i, m := range mappings {
			sets[n] = append(sets[n], &structs.BlockDevice{VolumeID: ids[i], BootIndex: int(m.bootIndex),
				Device: m.device, Tag: m.tag, DeleteOnTermination: m.deleteOnTermination})
			if m.bootIndex == 0 {
				args.ImageID = "" // the volume is the root disk
			}
		}
	}
	if err := q.awaitVolumes(made); err != nil {
		return made, err
	}
	if len(sets) == 1 {
		args.BlockDevices = sets[0]
	} else {
		args.BlockDeviceSets = sets
	}
	return made, nil
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

// makeVolume creates the volume of an image, snapshot or blank
// mapping on host ("" to let the servers choose).
func (q *request) makeVolume(m volumeMapping, host string) (*structs.Volume, error) {
	v := &structs.Volume{UserID: q.token.UserID, SizeGB: int(m.size), VolumeTypeID: m.volumeType}
	switch m.source {
	case "image":
		v.ImageID = m.uuid
	case "snapshot":
		v.SnapshotID = m.uuid
	}
	var out structs.SingleVolumeResponse
	err := q.call("Volume.Create", &structs.VolumeCreateRequest{ProjectID: q.token.ProjectID, Volume: v, Host: host}, &out)
	switch {
	case err == nil:
	case structs.KindOf(err) == structs.KindNotFound && m.source == "image":
		return nil, badRequest("Block Device Mapping is Invalid: failed to get image %s.", m.uuid)
	case structs.KindOf(err) == structs.KindNotFound && m.source == "snapshot":
		return nil, badRequest("Block Device Mapping is Invalid: failed to get snapshot %s.", m.uuid)
	case structs.KindOf(err) == structs.KindNotFound, structs.KindOf(err) == structs.KindInvalid:
		return nil, badRequest("%s", structs.Message(err))
	case structs.KindOf(err) == structs.KindQuotaReached:
		return nil, faultf(http.StatusForbidden, "%s", structs.Message(err))
	default:
		return nil, err
	}
	if out.Volume.Status == structs.VolumeError {
		q.deleteMadeVolumes([]string{out.Volume.ID})
		return nil, volumeNotMade(out.Volume)
	}
	return out.Volume, nil
}

// volumeNotMade is the answer for a volume its storage host failed to
// make, in the words of Nova's build abort.
func volumeNotMade(v *structs.Volume) error {
	reason := v.ErrorMessage
	if reason == "" {
		reason = "no reason was given"
	}
	return faultf(http.StatusInternalServerError, "Volume %s did not finish being created. And its status is %s: %s", v.ID, v.Status, reason)
}

// awaitVolumes waits, with blocking reads, until each volume made is
// available; one that ends in error fails the create.
func (q *request) awaitVolumes(ids []string) error {
	ctx, cancel := context.WithTimeout(q.r.Context(), volumeWaitLimit)
	defer cancel()
	for _, id := range ids {
		var index uint64
		for {
			var out structs.SingleVolumeResponse
			req := &structs.VolumeSpecificRequest{VolumeID: id, ProjectID: q.token.ProjectID}
			req.MinQueryIndex, req.MaxQueryTime = index, 30*time.Second
			if err := q.call("Volume.Get", req, &out); err != nil {
				return err
			}
			switch out.Volume.Status {
			case structs.VolumeAvailable:
			case structs.VolumeCreating:
				if err := ctx.Err(); err != nil {
					return faultf(http.StatusInternalServerError, "Volume %s did not finish being created even after we waited %s.", id, volumeWaitLimit)
				}
				index = out.Index
				continue
			default:
				return volumeNotMade(out.Volume)
			}
			break
		}
	}
	return nil
}

// deleteMadeVolumes deletes the volumes a failed create made; a volume
// that cannot be deleted is left for its owner to see, and logged.
func (q *request) deleteMadeVolumes(ids []string) {
	for _, id := range ids {
		var out structs.GenericResponse
		err := q.call("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: id, ProjectID: q.token.ProjectID}, &out)
		if err != nil {
			q.api.logger.Warn("cannot delete a volume a failed server create made", "volume_id", id, "error", fmt.Sprint(err))
		}
	}
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
