package server

import (
	"slices"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// snapshotDeletable are the statuses a snapshot may be deleted from.
var snapshotDeletable = []string{structs.SnapshotAvailable, structs.SnapshotError}

// SnapshotCreate snapshots a volume of the caller's project on the
// volume's storage host.
func (e *Volume) SnapshotCreate(args *structs.VolumeSnapshotCreateRequest, reply *structs.SingleVolumeSnapshotResponse) error {
	if done, err := e.srv.forward("Volume.SnapshotCreate", args, args, reply); done {
		return err
	}
	if args.Snapshot == nil || args.Snapshot.VolumeID == "" {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: a snapshot needs a volume_id")
	}
	snap := args.Snapshot.Copy()
	v, err := e.ownVolume(snap.VolumeID, args.ProjectID)
	if err != nil {
		return err
	}
	if snap.ID == "" {
		snap.ID = uuid.NewString()
	}
	now := time.Now().UnixNano()
	snap.ProjectID, snap.Status, snap.CreatedAt, snap.UpdatedAt = v.ProjectID, structs.SnapshotCreating, now, now
	snap.ProviderLocation, snap.ErrorMessage = "", ""
	if v.Status == structs.VolumeInUse && !args.Force {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available, but current status is: in-use.", v.ID)
	}
	volumePlaceMu.Lock()
	ok, err := storageHostHasRoom(e.srv.fsm.State(), v.Host, v.SizeGB)
	volumePlaceMu.Unlock()
	if err != nil {
		return err
	}
	if !ok {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: the storage host of volume %s has no room for a %d GB snapshot.", v.ID, v.SizeGB)
	}
	index, err := e.srv.apply(structs.VolumeSnapshotCreateType, &structs.VolumeSnapshotCreateEntry{Snapshot: snap, AllowInUse: args.Force})
	if err != nil {
		return err
	}
	stored, err := e.srv.fsm.State().VolumeSnapshot(nil, snap.ID)
	if err != nil {
		return err
	}
	reply.Snapshot, reply.Index = stored, index
	return nil
}

// SnapshotList reads a project's snapshots (every project's for "",
// admins only), oldest first.
func (e *Volume) SnapshotList(args *structs.VolumeSnapshotListRequest, reply *structs.VolumeSnapshotListResponse) error {
	if done, err := e.srv.forward("Volume.SnapshotList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		snaps, err := state.VolumeSnapshots(ws, args.ProjectID)
		slices.SortStableFunc(snaps, func(a, b *structs.VolumeSnapshot) int {
			return compareCreated(a.CreateIndex, b.CreateIndex, a.ID, b.ID)
		})
		reply.Snapshots = snaps
		return snaps, state.Index(fsm.TableVolumeSnapshots), err
	})
}

// SnapshotGet reads one snapshot of the caller's project.
func (e *Volume) SnapshotGet(args *structs.VolumeSnapshotSpecificRequest, reply *structs.SingleVolumeSnapshotResponse) error {
	if done, err := e.srv.forward("Volume.SnapshotGet", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		s, err := state.VolumeSnapshot(ws, args.SnapshotID)
		if s != nil && args.ProjectID != "" && s.ProjectID != args.ProjectID {
			s = nil
		}
		reply.Snapshot = s
		return s, state.Index(fsm.TableVolumeSnapshots), err
	})
	if err == nil && reply.Snapshot == nil {
		return snapshotNotFound(args.SnapshotID)
	}
	return err
}

func snapshotNotFound(id string) error {
	return structs.Errorf(structs.KindNotFound, "Snapshot %s could not be found.", id)
}

func (e *Volume) ownSnapshot(id, projectID string) (*structs.VolumeSnapshot, error) {
	s, err := e.srv.fsm.State().VolumeSnapshot(nil, id)
	if err != nil {
		return nil, err
	}
	if s == nil || (projectID != "" && s.ProjectID != projectID) {
		return nil, snapshotNotFound(id)
	}
	return s, nil
}

// SnapshotUpdate changes a snapshot's name, description or metadata, or
// resets its status (admins).
func (e *Volume) SnapshotUpdate(args *structs.VolumeSnapshotUpdateRequest, reply *structs.SingleVolumeSnapshotResponse) error {
	if done, err := e.srv.forward("Volume.SnapshotUpdate", args, args, reply); done {
		return err
	}
	s, err := e.ownSnapshot(args.SnapshotID, args.ProjectID)
	if err != nil {
		return err
	}
	entry := &structs.VolumeSnapshotUpdateEntry{ID: s.ID, Name: args.Name, Description: args.Description,
		Metadata: args.Metadata, ReplaceMetadata: args.ReplaceMetadata, DeleteMetadata: args.DeleteMetadata,
		UpdatedAt: time.Now().UnixNano()}
	if args.ResetStatus != "" {
		valid := []string{structs.SnapshotCreating, structs.SnapshotAvailable, structs.SnapshotDeleting,
			structs.SnapshotError, structs.SnapshotErrorDeleting}
		if !slices.Contains(valid, args.ResetStatus) {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Invalid status %s", args.ResetStatus)
		}
		entry.Status = args.ResetStatus
	}
	index, err := e.srv.apply(structs.VolumeSnapshotUpdateType, entry)
	if err != nil {
		return err
	}
	updated, err := e.srv.fsm.State().VolumeSnapshot(nil, s.ID)
	if err != nil {
		return err
	}
	reply.Snapshot, reply.Index = updated, index
	return nil
}

// SnapshotDelete starts a snapshot's deletion on its storage host.
func (e *Volume) SnapshotDelete(args *structs.VolumeSnapshotDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Volume.SnapshotDelete", args, args, reply); done {
		return err
	}
	s, err := e.ownSnapshot(args.SnapshotID, args.ProjectID)
	if err != nil {
		return err
	}
	if !slices.Contains(snapshotDeletable, s.Status) {
		return structs.Errorf(structs.KindInvalid, "Invalid snapshot: Volume Snapshot status must be available or error, not %s.", s.Status)
	}
	var index uint64
	gone, err := e.hostGone(s.Host)
	if err != nil {
		return err
	}
	if gone {
		index, err = e.srv.apply(structs.VolumeSnapshotDeleteType, &structs.VolumeSnapshotDeleteEntry{ID: s.ID, FromStatus: snapshotDeletable})
	} else {
		index, err = e.srv.apply(structs.VolumeSnapshotUpdateType, &structs.VolumeSnapshotUpdateEntry{ID: s.ID,
			FromStatus: snapshotDeletable, Status: structs.SnapshotDeleting, UpdatedAt: time.Now().UnixNano()})
	}
	reply.Index = index
	return err
}
