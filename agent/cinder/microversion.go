package cinder

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Cinder's microversions: 3.0 to 3.70 (3.71, the completion of an
// extend Nova drives, is not served: the compute agents finish an
// attached volume's extend themselves, without Nova's callback).
const (
	minVersion = 0
	maxVersion = 70
	// versionUpdated is when Cinder last changed its maximum.
	versionUpdated = "2023-08-31T00:00:00Z"
)

// The microversions that change what this API answers.
const (
	mvVolumeSummary      = 12 // GET /volumes/summary
	mvGroupVolume        = 13 // group_id in volume details
	mvVolumeDeleteForce  = 23 // DELETE /volumes/{id}?force=true
	mvSnapshotSort       = 30 // sort by a snapshot's name
	mvSummaryMetadata    = 36 // metadata in the volume summary
	mvProviderID         = 21 // provider_id for admins
	mvGroupSnapshots     = 14 // group_snapshot_id in snapshot details
	mvSnapshotUserID     = 41 // user_id in snapshot details
	mvExtendInUse        = 42 // os-extend of an in-use volume
	mvCountInfo          = 45 // ?with_count=true
	mvSharedTargets      = 48 // shared_targets, service_uuid
	mvClusterName        = 61 // cluster_name for admins
	mvVolumeTypeID       = 63 // volume_type_id in details
	mvUseQuota           = 65 // consumes_quota
	mvSnapshotInUse      = 66 // snapshot in-use volumes without force
	mvSharedTargetsNull  = 69 // shared_targets may be null
	versionHeader        = "OpenStack-API-Version"
	versionHeaderService = "volume"
)

// negotiate reads OpenStack-API-Version: volume 3.x ("latest" is the
// maximum; none is 3.0). An unparsable one is 400, one out of range
// Cinder's 406.
func (q *request) negotiate() error {
	q.version = minVersion
	raw := ""
	for _, h := range q.r.Header.Values(versionHeader) {
		for _, part := range strings.Split(h, ",") {
			f := strings.Fields(part)
			if len(f) == 2 && strings.EqualFold(f[0], versionHeaderService) {
				raw = f[1]
			}
		}
	}
	if raw == "" {
		return nil
	}
	if strings.EqualFold(raw, "latest") {
		q.version = maxVersion
		return nil
	}
	major, minor, ok := strings.Cut(raw, ".")
	m, err1 := strconv.Atoi(major)
	n, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || n < 0 {
		return errorf(http.StatusBadRequest, "API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", raw)
	}
	if m != 3 || n > maxVersion {
		return errorf(http.StatusNotAcceptable, "Version %s is not supported by the API. Minimum is 3.%d and maximum is 3.%d.", raw, minVersion, maxVersion)
	}
	q.version = n
	return nil
}

// versionHeaders names the microversion the answer follows.
func (q *request) versionHeaders() {
	h := q.w.Header()
	h.Set(versionHeader, fmt.Sprintf("%s 3.%d", versionHeaderService, q.version))
	h.Add("Vary", versionHeader)
}

// at reports whether the request's microversion is at least 3.v.
func (q *request) at(v int) bool { return q.version >= v }
