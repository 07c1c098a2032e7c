package server

import (
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// A create whose block devices make volumes (image, snapshot or blank
// to volume) makes them in its own entry: the leader places each
// instance's new volumes (on the storage host it is pinned to, if any,
// else where there is most room), names them, and
// the instance waits for them in the FSM with its own evaluation
// (structs.VolumeBuild, fsm/boot_volume_build.go). The API agent that
// took the request has nothing left to do once the entry committed.

// defaultVolumeBuildTimeout bounds how long an instance waits for the
// volumes its create made (an image copied into a volume) before its
// build is failed (Config.VolumeBuildTimeout), and volumeBuildCheck how
// often the leader looks at most.
const (
	defaultVolumeBuildTimeout = 10 * time.Minute
	volumeBuildCheck          = 15 * time.Second
)

// existingVolume reports whether a block device names a volume that
// exists rather than one the create makes.
func existingVolume(bd *structs.BlockDevice) bool { return bd.Source == "" }

// planBuildVolumes makes the volumes of entry's instances' new block
// devices: each instance gets its own, and waits for them with an
// evaluation of its own instead of the create's. An instance pinned to
// a storage host (one of its volumes is reached only there, or an
// admin asked for that host) gets them there; any other has them placed
// on the storage host with the most room, and is pinned to it only when
// that host serves no NBD exports (then the volume is reached only as
// its file there).
func (s *Server) planBuildVolumes(state *fsm.StateStore, entry *structs.InstanceCreateEntry) error {
	if !slices.ContainsFunc(entry.Instances, makesVolumes) {
		return nil
	}
	volumePlaceMu.Lock()
	defer volumePlaceMu.Unlock()
	ve := &Volume{srv: s, planned: map[string]int64{}}
	for _, inst := range entry.Instances {
		if !makesVolumes(inst) {
			continue
		}
		for _, bd := range inst.BlockDevices {
			if existingVolume(bd) {
				continue
			}
			at, err := volumeHostFor(state, inst.TargetHostID)
			if err != nil {
				return err
			}
			v, err := ve.planBuildVolume(state, inst, bd, at, entry.CreatedAt)
			if err != nil {
				return err
			}
			if err := pinToLocalVolume(state, inst, v); err != nil {
				return err
			}
			bd.VolumeID = v.ID
			entry.Volumes = append(entry.Volumes, v)
		}
		inst.TaskState = structs.TaskBlockDeviceMapping
		ev := &structs.Evaluation{ID: uuid.NewString(), TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusPending,
			CreatedAt: entry.CreatedAt, InstanceIDs: []string{inst.ID}}
		inst.VolumeBuild = &structs.VolumeBuild{Eval: ev, StartedAt: entry.CreatedAt}
		entry.Eval.InstanceIDs = slices.DeleteFunc(entry.Eval.InstanceIDs, func(id string) bool { return id == inst.ID })
	}
	if len(entry.Eval.InstanceIDs) == 0 {
		entry.Eval = nil
	}
	return nil
}

// volumeHostFor is where a new volume of an instance pinned to host
// must be made: that host when it is a storage host (a volume there is
// reached as its file), else anywhere ("").
func volumeHostFor(state *fsm.StateStore, host string) (string, error) {
	if host == "" {
		return "", nil
	}
	h, err := state.HostByID(nil, host)
	if err != nil {
		return "", err
	}
	if h == nil || storageCapacityGB(h) == 0 {
		return "", nil
	}
	return host, nil
}

// pinToLocalVolume pins inst to the storage host of its new file volume
// v when that host serves no NBD exports, so that the volume is reached
// as its file there; an instance already pinned elsewhere cannot reach
// it (400).
func pinToLocalVolume(state *fsm.StateStore, inst *structs.Instance, v *structs.Volume) error {
	if v.Host == "" || v.Backend == structs.VolumeBackendRBD || v.Host == inst.TargetHostID {
		return nil
	}
	if reach, err := servesExports(state, v.Host); err != nil || reach {
		return err
	}
	if inst.TargetHostID != "" {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: a new volume of the server can only be made on storage host %s, which serves no NBD exports (storage nbd_address), and the server must run on host %s", v.Host, inst.TargetHostID)
	}
	inst.TargetHostID = v.Host
	return nil
}

// makesVolumes reports whether an instance's create makes volumes.
func makesVolumes(inst *structs.Instance) bool {
	return slices.ContainsFunc(inst.BlockDevices, func(bd *structs.BlockDevice) bool { return !existingVolume(bd) })
}

// planBuildVolume readies the volume one block device makes for inst,
// on host when set. The refusals are Nova's for the mapping.
func (e *Volume) planBuildVolume(state *fsm.StateStore, inst *structs.Instance, bd *structs.BlockDevice, host string, now int64) (*structs.Volume, error) {
	v := &structs.Volume{ID: uuid.NewString(), ProjectID: inst.ProjectID, UserID: inst.UserID, SizeGB: bd.SizeGB,
		VolumeTypeID: bd.VolumeType, MadeFor: &structs.VolumeMadeFor{InstanceID: inst.ID, DeleteOnTermination: bd.DeleteOnTermination}}
	if vt, err := state.VolumeType(nil, v.VolumeTypeID); err != nil {
		return nil, err
	} else if vt == nil {
		return nil, structs.Errorf(structs.KindInvalid, "Volume type %s could not be found.", v.VolumeTypeID)
	}
	switch bd.Source {
	case structs.BlockSourceImage:
		v.ImageID = bd.SourceID
	case structs.BlockSourceSnapshot:
		v.SnapshotID = bd.SourceID
	case structs.BlockSourceBlank:
	default:
		return nil, structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: source type %q cannot make a volume.", bd.Source)
	}
	if v.SizeGB < 1 {
		return nil, structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: a volume of %d GB cannot be made.", v.SizeGB)
	}
	err := e.placeNew(state, v, host, now)
	switch {
	case err == nil:
	case structs.KindOf(err) == structs.KindNotFound && v.ImageID != "":
		return nil, structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: failed to get image %s.", v.ImageID)
	case structs.KindOf(err) == structs.KindNotFound && v.SnapshotID != "":
		return nil, structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: failed to get snapshot %s.", v.SnapshotID)
	case structs.KindOf(err) == structs.KindNotFound:
		return nil, structs.Errorf(structs.KindInvalid, "%s", structs.Message(err))
	default:
		return nil, err
	}
	if bd.BootIndex == 0 && inst.ImageID == "" && v.ImageID != "" {
		if img, err := state.ImageByID(nil, v.ImageID); err == nil && img != nil {
			inst.ImageProperties = maps.Clone(img.Properties)
		}
	}
	return v, nil
}

// startVolumeBuildTimeouts ends, while this server leads, the builds
// that waited longer than Config.VolumeBuildTimeout for their volumes (a storage
// host that went away with a volume half made): without it such a
// server would stay in BUILD for good.
func (s *Server) startVolumeBuildTimeouts(stopCh chan struct{}) {
	limit := s.config.VolumeBuildTimeout
	if limit <= 0 {
		limit = defaultVolumeBuildTimeout
	}
	s.runPeriodicAsLeader(stopCh, min(volumeBuildCheck, limit/4), func(now time.Time) {
		if err := s.timeOutVolumeBuilds(now, limit); err != nil {
			s.logger.Warn("cannot end the server builds whose volumes were not made in time", "error", err)
		}
	})
}

// timeOutVolumeBuilds proposes the end of the builds that started more
// than limit before now; the FSM checks both again.
func (s *Server) timeOutVolumeBuilds(now time.Time, limit time.Duration) error {
	builds, err := s.fsm.State().VolumeBuilds(nil)
	if err != nil {
		return err
	}
	entry := &structs.VolumeBuildTimeoutEntry{At: now.UnixNano(), Limit: int64(limit)}
	for _, inst := range builds {
		if entry.At-inst.VolumeBuild.StartedAt >= entry.Limit {
			entry.InstanceIDs = append(entry.InstanceIDs, inst.ID)
		}
	}
	if len(entry.InstanceIDs) == 0 {
		return nil
	}
	_, err = s.apply(structs.VolumeBuildTimeoutType, entry)
	return err
}
