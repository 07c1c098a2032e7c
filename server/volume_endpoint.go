package server

import (
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Volume is the endpoint of block storage: volumes, their snapshots,
// volume types and volume quotas for the Block Storage API, and the
// storage agents' reads and reports of the volumes on their hosts.
type Volume struct {
	srv *Server
	// planned is what the volumes placed for one entry, not yet in the
	// state, take on each storage host (GB), so that the volumes of a
	// multi-create count each other's room; nil outside such a plan.
	planned map[string]int64
}

// volumePlaceMu serializes the leader's choice of storage hosts, so two
// creates do not both count the same free room.
var volumePlaceMu sync.Mutex

// volumeDeletable are the statuses a volume may be deleted from without
// force, Cinder's.
var volumeDeletable = []string{structs.VolumeAvailable, structs.VolumeError, "error_restoring",
	structs.VolumeErrorExtend, "error_managing"}

// deleteRefusal is Cinder's message for a volume that cannot be deleted.
const deleteRefusal = "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer."

// Create stores a new volume in creating on a storage host the leader
// chooses (in error when none can take it, as Cinder's scheduler
// leaves it), or refuses it for its quotas, type or source.
func (e *Volume) Create(args *structs.VolumeCreateRequest, reply *structs.SingleVolumeResponse) error {
	if done, err := e.srv.forward("Volume.Create", args, args, reply); done {
		return err
	}
	if args.Volume == nil {
		return structs.Errorf(structs.KindInvalid, "no volume to create")
	}
	v := args.Volume.Copy()
	v.MadeFor = nil // only a server create makes a volume for a server
	if args.ProjectID != "" {
		v.ProjectID = args.ProjectID
	}
	if v.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "a volume needs a project")
	}
	if v.ID == "" {
		v.ID = uuid.NewString()
	}
	if v.SizeGB < 1 {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: Volume size '%d' must be an integer and greater than 0", v.SizeGB)
	}
	if n := countSources(v); n > 1 {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: only one of imageRef, snapshot_id and source_volid may be given")
	}
	volumePlaceMu.Lock()
	defer volumePlaceMu.Unlock()
	state := e.srv.fsm.State()
	if err := e.placeNew(state, v, args.Host, time.Now().UnixNano()); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.VolumeCreateType, &structs.VolumeCreateEntry{Volume: v})
	if err != nil {
		return err
	}
	stored, err := state.Volume(nil, v.ID)
	if err != nil {
		return err
	}
	reply.Volume, reply.Index = stored, index
	return nil
}

// placeNew readies a new volume for its create entry at now: in
// creating on the storage host the leader chooses (host when set, which
// must agree with the host of its source), or in error when none can
// take it. The caller holds volumePlaceMu.
func (e *Volume) placeNew(state *fsm.StateStore, v *structs.Volume, host string, now int64) error {
	v.Status, v.Attachments, v.ProviderLocation, v.ErrorMessage = structs.VolumeCreating, nil, "", ""
	v.Backend = structs.VolumeBackendFile
	if v.Format == "" {
		v.Format = "qcow2"
	}
	v.CreatedAt, v.UpdatedAt = now, now
	pinned, err := e.prepareSource(state, v)
	if err != nil {
		return err
	}
	if host != "" {
		if pinned != "" && pinned != host {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: the volume's source is kept on host %s, not on host %s", pinned, host)
		}
		pinned = host
	}
	backendName, err := typeBackendName(state, v.VolumeTypeID)
	if err != nil {
		return err
	}
	chosen, err := chooseStorageHost(state, v.SizeGB, v.AvailabilityZone, pinned, backendName, e.planned)
	if err != nil {
		return err
	}
	if chosen != "" && e.planned != nil {
		e.planned[chosen] += int64(v.SizeGB)
	}
	v.Host = chosen
	if chosen == "" {
		v.Status, v.ErrorMessage = structs.VolumeError, noValidBackend
	} else if err := e.setBackend(state, v); err != nil {
		return err
	}
	return nil
}

func countSources(v *structs.Volume) int {
	n := 0
	for _, s := range []string{v.ImageID, v.SnapshotID, v.SourceVolumeID} {
		if s != "" {
			n++
		}
	}
	return n
}

// prepareSource checks a volume's image and records what the storage
// host needs to fetch it; a snapshot or source volume pins the volume to
// its host (the FSM checks the rest of the source).
func (e *Volume) prepareSource(state *fsm.StateStore, v *structs.Volume) (string, error) {
	switch {
	case v.ImageID != "":
		img, err := state.ImageByID(nil, v.ImageID)
		if err != nil {
			return "", err
		}
		var member *structs.ImageMember
		if img != nil {
			if member, err = state.ImageMemberByID(nil, img.ID, v.ProjectID); err != nil {
				return "", err
			}
		}
		if img == nil || !img.VisibleTo(structs.ImageAccess{ProjectID: v.ProjectID}, member) {
			return "", structs.Errorf(structs.KindNotFound, "Image %s could not be found.", v.ImageID)
		}
		if img.Status != structs.ImageActive || !img.HasData() {
			return "", structs.Errorf(structs.KindInvalid, "Invalid image: Image %s is not active.", img.ID)
		}
		need := max(gibCeil(img.Size), gibCeil(img.VirtualSize), int64(img.MinDisk))
		if int64(v.SizeGB) < need {
			return "", structs.Errorf(structs.KindInvalid, "Invalid input received: Size of specified image %d is larger than volume size %d.", need, v.SizeGB)
		}
		v.ImageHash, v.ImageSize, v.Bootable = img.HashValue, img.Size, true
		return "", nil
	case v.SnapshotID != "":
		snap, err := state.VolumeSnapshot(nil, v.SnapshotID)
		if err != nil || snap == nil {
			return "", err
		}
		if src, err := state.Volume(nil, snap.VolumeID); err == nil && src != nil {
			v.Bootable = src.Bootable
		}
		return snap.Host, nil
	case v.SourceVolumeID != "":
		src, err := state.Volume(nil, v.SourceVolumeID)
		if err != nil || src == nil {
			return "", err
		}
		v.Bootable = src.Bootable
		return src.Host, nil
	}
	return "", nil
}

// gibCeil is bytes in GiB, rounded up.
func gibCeil(b int64) int64 { return (b + 1<<30 - 1) >> 30 }

// List reads a project's volumes (every project's for "", admins only),
// oldest first.
func (e *Volume) List(args *structs.VolumeListRequest, reply *structs.VolumeListResponse) error {
	if done, err := e.srv.forward("Volume.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		vols, err := state.Volumes(ws, args.ProjectID)
		slices.SortStableFunc(vols, func(a, b *structs.Volume) int { return compareCreated(a.CreateIndex, b.CreateIndex, a.ID, b.ID) })
		reply.Volumes = vols
		return vols, state.Index(fsm.TableVolumes), err
	})
}

func compareCreated(ai, bi uint64, a, b string) int {
	switch {
	case ai < bi:
		return -1
	case ai > bi:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Get reads one volume of the caller's project.
func (e *Volume) Get(args *structs.VolumeSpecificRequest, reply *structs.SingleVolumeResponse) error {
	if done, err := e.srv.forward("Volume.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		v, err := state.Volume(ws, args.VolumeID)
		if v != nil && args.ProjectID != "" && v.ProjectID != args.ProjectID {
			v = nil
		}
		reply.Volume = v
		return v, state.Index(fsm.TableVolumes), err
	})
	if err == nil && reply.Volume == nil {
		return volumeNotFound(args.VolumeID)
	}
	return err
}

func volumeNotFound(id string) error {
	return structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", id)
}

// ownVolume reads a volume on the leader, hiding other projects' ones.
func (e *Volume) ownVolume(id, projectID string) (*structs.Volume, error) {
	v, err := e.srv.fsm.State().Volume(nil, id)
	if err != nil {
		return nil, err
	}
	if v == nil || (projectID != "" && v.ProjectID != projectID) {
		return nil, volumeNotFound(id)
	}
	return v, nil
}

// Update changes a volume's name, description, metadata or bootable
// flag, extends it (NewSizeGB, from available or with ExtendAttached
// from in-use, checked against the quotas and its host's room), or resets its status (admins).
func (e *Volume) Update(args *structs.VolumeUpdateRequest, reply *structs.SingleVolumeResponse) error {
	if done, err := e.srv.forward("Volume.Update", args, args, reply); done {
		return err
	}
	v, err := e.ownVolume(args.VolumeID, args.ProjectID)
	if err != nil {
		return err
	}
	entry := &structs.VolumeUpdateEntry{ID: v.ID, Name: args.Name, Description: args.Description, Bootable: args.Bootable,
		Metadata: args.Metadata, ReplaceMetadata: args.ReplaceMetadata, DeleteMetadata: args.DeleteMetadata,
		UpdatedAt: time.Now().UnixNano()}
	if args.ResetStatus != "" {
		if !slices.Contains(structs.VolumeStatuses, args.ResetStatus) {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Invalid status %s", args.ResetStatus)
		}
		entry.Status, entry.Reset = args.ResetStatus, true
	}
	if args.NewSizeGB != 0 {
		if err := e.prepareExtend(v, args.NewSizeGB, args.ExtendAttached, entry); err != nil {
			return err
		}
	}
	index, err := e.srv.apply(structs.VolumeUpdateType, entry)
	if err != nil {
		return err
	}
	updated, err := e.srv.fsm.State().Volume(nil, v.ID)
	if err != nil {
		return err
	}
	reply.Volume, reply.Index = updated, index
	return nil
}

// prepareExtend turns an extend into its entry: from available (or
// in-use when attached is allowed, Cinder 3.42+), to a larger size its
// host has room for. The volume keeps its attachments while it extends.
func (e *Volume) prepareExtend(v *structs.Volume, newSize int, attached bool, entry *structs.VolumeUpdateEntry) error {
	from := structs.VolumeAvailable
	if attached && v.Status == structs.VolumeInUse {
		from = structs.VolumeInUse
	}
	if v.Status != from {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be '{'status': '%s'}' to extend, currently %s.", v.ID, from, v.Status)
	}
	if newSize <= v.SizeGB {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: New size for extend must be greater than current size. (current: %d, extended: %d).", v.SizeGB, newSize)
	}
	if from == structs.VolumeInUse {
		if l, _ := e.srv.ClusterFSMLevel(); l < structs.FSMLevelExtendAttached {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is in-use: the servers are being upgraded; extend it once they are.", v.ID)
		}
		if err := checkAttachedExtend(v); err != nil {
			return err
		}
	}
	volumePlaceMu.Lock()
	ok, err := storageHostHasRoom(e.srv.fsm.State(), v.Host, newSize-v.SizeGB)
	volumePlaceMu.Unlock()
	if err != nil {
		return err
	}
	if !ok {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: the storage host of volume %s has no room for %d GB more.", v.ID, newSize-v.SizeGB)
	}
	entry.FromStatus, entry.Status, entry.SizeGB = []string{from}, structs.VolumeExtending, newSize
	return nil
}

// checkAttachedExtend refuses to extend an in-use file volume that an
// instance reaches through the storage host's NBD export (on another
// host, after a move, or while one is under way): QEMU's NBD client
// cannot grow a disk ("Cannot grow NBD nodes"), so the guest would
// never see the new size.
func checkAttachedExtend(v *structs.Volume) error {
	if v.Backend == structs.VolumeBackendRBD {
		return nil
	}
	for _, a := range v.Attachments {
		if a.External {
			continue
		}
		if a.Exported || a.MoveHost != "" || (a.Host != "" && a.Host != v.Host) {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is attached to instance %s through an NBD export of its storage host, which cannot grow while attached; detach it to extend it.", v.ID, a.InstanceID)
		}
	}
	return nil
}

// Delete starts a volume's deletion: its storage host removes its data
// and then its record. A volume no host holds, or whose host was
// removed from the cluster, is removed at once.
// Without Force, only Cinder's deletable statuses qualify; never an
// attached volume, nor one with snapshots unless Cascade.
func (e *Volume) Delete(args *structs.VolumeDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Volume.Delete", args, args, reply); done {
		return err
	}
	v, err := e.ownVolume(args.VolumeID, args.ProjectID)
	if err != nil {
		return err
	}
	if len(v.Attachments) > 0 || (!args.Force && !slices.Contains(volumeDeletable, v.Status)) {
		return structs.Errorf(structs.KindInvalid, "%s", deleteRefusal)
	}
	snaps, err := e.srv.fsm.State().VolumeSnapshots(nil, v.ProjectID)
	if err != nil {
		return err
	}
	snaps = slices.DeleteFunc(snaps, func(s *structs.VolumeSnapshot) bool { return s.VolumeID != v.ID })
	if len(snaps) > 0 && !args.Cascade {
		return structs.Errorf(structs.KindInvalid, "%s", deleteRefusal)
	}
	from := volumeDeletable
	if args.Force {
		from = nil
	}
	var index uint64
	gone, err := e.hostGone(v.Host)
	if err != nil {
		return err
	}
	if args.Cascade {
		index, err = e.cascadeDelete(v, snaps, from, args.Force, gone)
	} else if gone {
		index, err = e.srv.apply(structs.VolumeDeleteType, &structs.VolumeDeleteEntry{ID: v.ID, FromStatus: from})
	} else {
		// A forced delete steps outside the status machine.
		index, err = e.srv.apply(structs.VolumeUpdateType, &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: from,
			Status: structs.VolumeDeleting, Reset: args.Force, UpdatedAt: time.Now().UnixNano()})
	}
	reply.Index = index
	return err
}

// hostGone reports whether a volume's storage host is none or no longer
// registered: nothing would ever delete its data, so its record goes at
// once.
func (e *Volume) hostGone(hostID string) (bool, error) {
	if hostID == "" {
		return true, nil
	}
	h, err := e.srv.fsm.State().HostByID(nil, hostID)
	return h == nil, err
}
