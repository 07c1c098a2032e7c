package server

import (
	"strconv"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The leader places a new volume on a storage host: an up, enabled
// host whose agent keeps a pool (HostCapabilityVolumes), in the
// volume's availability zone when it names one, with the most room
// left. A volume made from a snapshot or another volume must be where
// its source is: the file backend copies locally.

// noValidBackend is Cinder's reason for a volume no backend could take.
const noValidBackend = "No valid backend was found. No weighed backends available"

// storageCapacityGB is a storage host's pool size its agent
// fingerprinted; 0 for a host without a pool.
func storageCapacityGB(h *structs.Host) int64 {
	if !h.HasCapability(structs.HostCapabilityVolumes) {
		return 0
	}
	n, err := strconv.ParseInt(h.Attributes[structs.HostAttrStorageCapacityGB], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// storageUsedGB sums what the volumes and snapshots on each host take.
func storageUsedGB(state *fsm.StateStore) (map[string]int64, error) {
	used := map[string]int64{}
	vols, err := state.Volumes(nil, "")
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		used[v.Host] += int64(v.SizeGB)
	}
	snaps, err := state.VolumeSnapshots(nil, "")
	if err != nil {
		return nil, err
	}
	for _, s := range snaps {
		used[s.Host] += int64(s.SizeGB)
	}
	return used, nil
}

// storageBackend is what keeps a storage host's volumes
// (HostAttrStorageBackend; files unless it says otherwise).
func storageBackend(h *structs.Host) string {
	if b := h.Attributes[structs.HostAttrStorageBackend]; b != "" {
		return b
	}
	return structs.VolumeBackendFile
}

// typeBackendName is the backend name a volume type asks for (its
// volume_backend_name extra spec), "" for any.
func typeBackendName(state *fsm.StateStore, typeID string) (string, error) {
	vt, err := state.VolumeType(nil, typeID)
	if err != nil || vt == nil {
		return "", err
	}
	return vt.ExtraSpecs[structs.VolumeTypeBackendNameSpec], nil
}

// chooseStorageHost picks the host for sizeGB more: only pinned when
// set (the source's host), in az when set, of backend name backendName
// when set (HostAttrStorageBackendName). planned (may be nil) is what
// volumes placed but not yet in the state take on each host. "" when
// none has room.
func chooseStorageHost(state *fsm.StateStore, sizeGB int, az, pinned, backendName string, planned map[string]int64) (string, error) {
	hosts, err := state.Hosts(nil)
	if err != nil {
		return "", err
	}
	used, err := storageUsedGB(state)
	if err != nil {
		return "", err
	}
	best, bestFree := "", int64(-1)
	for _, h := range hosts {
		capacity := storageCapacityGB(h)
		if capacity == 0 || h.Status != structs.HostStatusUp || !h.Enabled || h.ForcedDown {
			continue
		}
		if (pinned != "" && h.ID != pinned) || (az != "" && h.AZ != az) {
			continue
		}
		if backendName != "" && h.Attributes[structs.HostAttrStorageBackendName] != backendName {
			continue
		}
		free := capacity - used[h.ID] - planned[h.ID]
		// Ties go to the smaller id, so the choice does not depend on
		// the table's order.
		if free >= int64(sizeGB) && (free > bestFree || (free == bestFree && h.ID < best)) {
			best, bestFree = h.ID, free
		}
	}
	return best, nil
}

// storageHostHasRoom reports whether a host can grow by extraGB.
func storageHostHasRoom(state *fsm.StateStore, hostID string, extraGB int) (bool, error) {
	h, err := state.HostByID(nil, hostID)
	if err != nil || h == nil {
		return false, err
	}
	used, err := storageUsedGB(state)
	if err != nil {
		return false, err
	}
	return storageCapacityGB(h)-used[hostID] >= int64(extraGB), nil
}

// setBackend records what keeps v on its host: RBD volumes are raw
// images in Ceph, the others files in the host's pool.
func (e *Volume) setBackend(state *fsm.StateStore, v *structs.Volume) error {
	h, err := state.HostByID(nil, v.Host)
	if err != nil || h == nil {
		return err
	}
	if v.Backend = storageBackend(h); v.Backend == structs.VolumeBackendRBD {
		v.Format = "raw"
	}
	return nil
}
