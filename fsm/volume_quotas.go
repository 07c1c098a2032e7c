package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Volume quotas live in the quotas table beside the compute and network
// ones (a project's set, the default class's), but change through an
// entry of their own: a server of an older level would refuse their
// names. Usage is counted from the volume and snapshot tables in the
// transaction that consumes it.

func init() {
	registerApply(structs.VolumeQuotaUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.QuotaEntry
		if err := decodeBody(structs.VolumeQuotaUpdateType, body, &e); err != nil {
			return err
		}
		if e.Delete {
			return structs.Errorf(structs.KindInvalid, "a volume quota entry cannot drop a project's quotas")
		}
		return s.updateQuotaSet(index, &e, structs.VolumeDefaultQuotas)
	})
}

// volumeUsage counts what a project uses of the volume resources.
func volumeUsage(txn *memdb.Txn, ws memdb.WatchSet, projectID string) (map[string]int64, error) {
	vols, err := list[*structs.Volume](txn, ws, TableVolumes, "project", projectID)
	if err != nil {
		return nil, err
	}
	snaps, err := list[*structs.VolumeSnapshot](txn, ws, TableVolumeSnapshots, "project", projectID)
	if err != nil {
		return nil, err
	}
	used := map[string]int64{structs.QuotaVolumes: int64(len(vols)), structs.QuotaVolumeSnapshots: int64(len(snaps))}
	for _, v := range vols {
		used[structs.QuotaGigabytes] += int64(v.SizeGB)
	}
	for _, s := range snaps {
		used[structs.QuotaGigabytes] += int64(s.SizeGB)
	}
	return used, nil
}

// checkVolumeQuota checks that a project may add volumes, snapshots and
// gigabytes, and that a volume of sizeGB (0: none) is within
// per_volume_gigabytes. The messages are Cinder's.
func checkVolumeQuota(txn *memdb.Txn, projectID string, volumes, snapshots, gigabytes int64, sizeGB int) error {
	if limit := quotaLimit(txn, projectID, structs.QuotaPerVolumeGigabytes); sizeGB > 0 && limit >= 0 && int64(sizeGB) > limit {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: Volume size %dG exceeds per_volume_gigabytes quota of %dG.", sizeGB, limit)
	}
	used, err := volumeUsage(txn, nil, projectID)
	if err != nil {
		return err
	}
	if limit := quotaLimit(txn, projectID, structs.QuotaGigabytes); gigabytes > 0 && limit >= 0 && used[structs.QuotaGigabytes]+gigabytes > limit {
		return structs.Errorf(structs.KindQuotaReached, "Requested volume or snapshot exceeds allowed gigabytes quota. Requested %dG, quota is %dG and %dG has been consumed.",
			gigabytes, limit, used[structs.QuotaGigabytes])
	}
	if limit := quotaLimit(txn, projectID, structs.QuotaVolumes); volumes > 0 && limit >= 0 && used[structs.QuotaVolumes]+volumes > limit {
		return structs.Errorf(structs.KindQuotaReached, "Maximum number of volumes allowed (%d) exceeded for quota 'volumes'.", limit)
	}
	if limit := quotaLimit(txn, projectID, structs.QuotaVolumeSnapshots); snapshots > 0 && limit >= 0 && used[structs.QuotaVolumeSnapshots]+snapshots > limit {
		return structs.Errorf(structs.KindQuotaReached, "Maximum number of snapshots allowed (%d) exceeded", limit)
	}
	return nil
}

// VolumeQuotaLimits returns the effective limit of every volume resource
// of a project, or of the default class for "".
func (s *StateStore) VolumeQuotaLimits(ws memdb.WatchSet, projectID string) map[string]int64 {
	txn := s.ReadTxn()
	out := make(map[string]int64, len(structs.VolumeDefaultQuotas))
	for _, r := range structs.VolumeQuotaResources() {
		if projectID == "" {
			out[r] = classLimit(txn, ws, structs.QuotaDefaultClass, r)
			continue
		}
		out[r] = quotaLimitWatch(txn, ws, projectID, r)
	}
	return out
}

// VolumeQuotaUsage counts what a project uses of the volume resources.
func (s *StateStore) VolumeQuotaUsage(ws memdb.WatchSet, projectID string) (map[string]int64, error) {
	used, err := volumeUsage(s.ReadTxn(), ws, projectID)
	if err != nil {
		return nil, fmt.Errorf("volume usage of %s: %w", projectID, err)
	}
	return used, nil
}
