package server

import (
	"maps"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// HostVolumes answers a storage agent with the volumes and snapshots
// its host keeps. It blocks until one of them changes past
// MinQueryIndex.
func (e *Volume) HostVolumes(args *structs.VolumeHostRequest, reply *structs.VolumeHostResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Volume.HostVolumes", args, args, reply); done {
		return err
	}
	if args.HostID == "" {
		return structs.Errorf(structs.KindInvalid, "a host id is required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		vols, err := state.VolumesByHost(ws, args.HostID)
		if err != nil {
			return nil, 0, err
		}
		snaps, err := state.VolumeSnapshotsByHost(ws, args.HostID)
		if err != nil {
			return nil, 0, err
		}
		names, err := attachmentHostNames(state, vols)
		if err != nil {
			return nil, 0, err
		}
		reply.Volumes, reply.Snapshots, reply.HostNames = vols, snaps, names
		index := max(state.Index(fsm.TableVolumes), state.Index(fsm.TableVolumeSnapshots))
		return reply, index, nil
	})
}

// attachmentHostNames names the hosts of vols' attachments, by id: a
// storage host admits those hosts' certificates to the attachments'
// NBD exports. A host that is gone is left out. The hosts are not
// watched: their records change with every heartbeat, their names
// hardly ever, and the next volume change reads them again.
func attachmentHostNames(state *fsm.StateStore, vols []*structs.Volume) (map[string]string, error) {
	names := map[string]string{}
	for _, v := range vols {
		for _, att := range v.Attachments {
			for _, id := range []string{att.Host, att.MoveHost} {
				if _, done := names[id]; id == "" || done {
					continue
				}
				h, err := state.HostByID(nil, id)
				if err != nil {
					return nil, err
				}
				if h != nil {
					names[id] = h.Name
				}
			}
		}
	}
	return names, nil
}

// HostAttached answers a compute agent with the volumes attached to
// instances on its host (by the Compute API: an external attachment is
// no agent's), so it can show an extended volume's new size to the
// guest. It blocks until a volume changes past MinQueryIndex.
func (e *Volume) HostAttached(args *structs.VolumeAttachedRequest, reply *structs.VolumeListResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Volume.HostAttached", args, args, reply); done {
		return err
	}
	if args.HostID == "" {
		return structs.Errorf(structs.KindInvalid, "a host id is required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		// The index wakes this query for the host's volumes only.
		vols, err := state.VolumesAttachedTo(ws, args.HostID)
		if err != nil {
			return nil, 0, err
		}
		reply.Volumes = vols
		return reply, state.Index(fsm.TableVolumes), nil
	})
}

// Report applies a storage agent's report about one volume or snapshot
// of its host. The entry carries the host, so the FSM refuses a report
// about a volume that has moved or is gone.
func (e *Volume) Report(args *structs.VolumeReportRequest, reply *structs.GenericResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Volume.Report", args, args, reply); done {
		return err
	}
	if args.HostID == "" {
		return structs.Errorf(structs.KindInvalid, "a host id is required")
	}
	var (
		t    structs.MessageType
		body any
	)
	switch {
	case args.Update != nil:
		u := *args.Update
		// An agent reports its work, never sizes or user fields.
		u.Host, u.SizeGB, u.Name, u.Description, u.Bootable, u.Reset = args.HostID, 0, nil, nil, nil, false
		u.Metadata, u.ReplaceMetadata, u.DeleteMetadata = nil, false, nil
		if u.UpdatedAt == 0 {
			u.UpdatedAt = time.Now().UnixNano() // a server build's wait is timed by it
		}
		t, body = structs.VolumeUpdateType, &u
	case args.Delete != nil:
		d := *args.Delete
		d.Host = args.HostID
		t, body = structs.VolumeDeleteType, &d
	case args.SnapshotUpdate != nil:
		u := *args.SnapshotUpdate
		u.Host, u.Name, u.Description = args.HostID, nil, nil
		u.Metadata, u.ReplaceMetadata, u.DeleteMetadata = nil, false, nil
		t, body = structs.VolumeSnapshotUpdateType, &u
	case args.SnapshotDelete != nil:
		d := *args.SnapshotDelete
		d.Host = args.HostID
		t, body = structs.VolumeSnapshotDeleteType, &d
	default:
		return structs.Errorf(structs.KindInvalid, "an empty volume report")
	}
	index, err := e.srv.apply(t, body)
	reply.Index = index
	return err
}

// Zones lists the availability zones of the storage hosts (Cinder's
// os-availability-zone).
func (e *Volume) Zones(args *structs.VolumeZonesRequest, reply *structs.VolumeZonesResponse) error {
	if done, err := e.srv.forward("Volume.Zones", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		hosts, err := state.Hosts(ws)
		if err != nil {
			return nil, 0, err
		}
		avail := map[string]bool{}
		for _, h := range hosts {
			if storageCapacityGB(h) == 0 {
				continue
			}
			avail[h.AZ] = avail[h.AZ] || (h.Status == structs.HostStatusUp && h.Enabled && !h.ForcedDown)
		}
		reply.Zones = nil
		for _, name := range slices.Sorted(maps.Keys(avail)) {
			reply.Zones = append(reply.Zones, structs.VolumeZone{Name: name, Available: avail[name]})
		}
		return reply.Zones, state.Index(fsm.TableHosts), nil
	})
}
