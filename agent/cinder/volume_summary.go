package cinder

import (
	"maps"
	"net/http"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// volumesSummary answers GET /volumes/summary (3.12): the count and total
// size of the project's volumes (every project's for an admin with
// all_tenants) and, from 3.36, every distinct value of each metadata
// key. As Cinder's, it takes no other filter.
func (a *API) volumesSummary(q *request) error {
	if err := q.needVersion(mvVolumeSummary); err != nil {
		return err
	}
	project := q.project()
	if q.isAdmin() && truthy(q.r.URL.Query().Get("all_tenants")) {
		project = ""
	}
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: project}, &out); err != nil {
		return err
	}
	size := 0
	values := map[string]map[string]bool{}
	for _, v := range out.Volumes {
		size += v.SizeGB
		for k, val := range v.Metadata {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][val] = true
		}
	}
	summary := map[string]any{"total_count": len(out.Volumes), "total_size": size}
	if q.at(mvSummaryMetadata) {
		meta := make(map[string][]string, len(values))
		for k, vals := range values {
			meta[k] = slices.Sorted(maps.Keys(vals))
		}
		summary["metadata"] = meta
	}
	return q.json(http.StatusOK, map[string]any{"volume-summary": summary})
}
