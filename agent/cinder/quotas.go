package cinder

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// quotaProject is the project of an os-quota-sets call: a non-admin may
// read only its own.
func (q *request) quotaProject() (string, error) {
	p := q.param("project")
	if p != q.project() && !q.isAdmin() {
		return "", errorf(http.StatusForbidden, "Policy doesn't allow volume_extension:quotas:show to be performed.")
	}
	return p, nil
}

// quotaSet is Cinder's quota set body: limits (or, with usage, limit,
// in_use and reserved) of every resource, and the per-type ones of each
// volume type, which Stratus does not enforce (-1).
func (q *request) quotaSet(id string, limits, usage map[string]int64, withUsage bool) (map[string]any, error) {
	set := map[string]any{"id": id}
	var types structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &types); err != nil {
		return nil, err
	}
	for _, t := range types.Types {
		for _, r := range []string{structs.QuotaVolumes, structs.QuotaGigabytes, structs.QuotaVolumeSnapshots} {
			limits[r+"_"+t.Name] = structs.QuotaUnlimited
		}
	}
	for k, v := range limits {
		if withUsage {
			set[k] = map[string]int64{"limit": v, "in_use": usage[k], "reserved": 0}
		} else {
			set[k] = v
		}
	}
	return set, nil
}

// quotaShow answers GET /os-quota-sets/{project}[?usage=true].
func (a *API) quotaShow(q *request) error {
	p, err := q.quotaProject()
	if err != nil {
		return err
	}
	withUsage := truthy(q.r.URL.Query().Get("usage"))
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{ProjectID: p, Usage: withUsage}, &out); err != nil {
		return err
	}
	set, err := q.quotaSet(p, out.Limits, out.Usage, withUsage)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"quota_set": set})
}

// quotaDefaults answers GET /os-quota-sets/{project}/defaults.
func (a *API) quotaDefaults(q *request) error {
	p, err := q.quotaProject()
	if err != nil {
		return err
	}
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{Defaults: true}, &out); err != nil {
		return err
	}
	set, err := q.quotaSet(p, out.Limits, nil, false)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"quota_set": set})
}

// readQuotaLimits reads {"<key>": {…}} of volume limits, refusing
// resources Cinder does not know.
func (q *request) readQuotaLimits(key string) (map[string]int64, error) {
	var body map[string]map[string]json.RawMessage
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	set, ok := body[key]
	if !ok || set == nil {
		return nil, errorf(http.StatusBadRequest, "Missing required element '%s' in request body.", key)
	}
	limits := map[string]int64{}
	var bad []string
	for k, raw := range set {
		if k == "tenant_id" || k == "id" || k == "class_name" {
			continue
		}
		if _, ok := structs.VolumeDefaultQuotas[k]; !ok {
			bad = append(bad, k)
			continue
		}
		n, err := intField(raw, k)
		if err != nil {
			return nil, err
		}
		if n < -1 {
			return nil, errorf(http.StatusBadRequest, "Invalid input received: Quota limit %d for %s must be -1 or greater.", n, k)
		}
		limits[k] = int64(n)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, errorf(http.StatusBadRequest, "Invalid input received: Bad key(s) in quota set: %s", strings.Join(bad, ", "))
	}
	return limits, nil
}

// quotaUpdate answers PUT /os-quota-sets/{project} (admins): the
// project's limits after the change.
func (a *API) quotaUpdate(q *request) error {
	limits, err := q.readQuotaLimits("quota_set")
	if err != nil {
		return err
	}
	p := q.param("project")
	if err := q.call("Volume.QuotaUpdate", &structs.VolumeQuotaUpdateRequest{ProjectID: p, Limits: limits}, &structs.GenericResponse{}); err != nil {
		return err
	}
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{ProjectID: p}, &out); err != nil {
		return err
	}
	set, err := q.quotaSet(p, out.Limits, nil, false)
	if err != nil {
		return err
	}
	delete(set, "id")
	return q.json(http.StatusOK, map[string]any{"quota_set": set})
}

// quotaClass checks the class of an os-quota-class-sets call: only
// "default", the defaults every project without its own limits has.
func (q *request) quotaClass() (string, error) {
	if c := q.param("class"); c != structs.QuotaDefaultClass {
		return "", errorf(http.StatusNotFound, "Quota class %s could not be found.", c)
	}
	return structs.QuotaDefaultClass, nil
}

// quotaClassShow answers GET /os-quota-class-sets/default (admins).
func (a *API) quotaClassShow(q *request) error {
	class, err := q.quotaClass()
	if err != nil {
		return err
	}
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{Defaults: true}, &out); err != nil {
		return err
	}
	set, err := q.quotaSet(class, out.Limits, nil, false)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"quota_class_set": set})
}

// quotaClassUpdate answers PUT /os-quota-class-sets/default (admins):
// the defaults change for every project without its own limits.
func (a *API) quotaClassUpdate(q *request) error {
	class, err := q.quotaClass()
	if err != nil {
		return err
	}
	limits, err := q.readQuotaLimits("quota_class_set")
	if err != nil {
		return err
	}
	if err := q.call("Volume.QuotaUpdate", &structs.VolumeQuotaUpdateRequest{Class: class, Limits: limits}, &structs.GenericResponse{}); err != nil {
		return err
	}
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{Defaults: true}, &out); err != nil {
		return err
	}
	set, err := q.quotaSet(class, out.Limits, nil, false)
	if err != nil {
		return err
	}
	delete(set, "id")
	return q.json(http.StatusOK, map[string]any{"quota_class_set": set})
}

// limits answers GET /limits: the caller's absolute limits and usage.
func (a *API) limits(q *request) error {
	var out structs.VolumeQuotaResponse
	if err := q.call("Volume.QuotaGet", &structs.VolumeQuotaRequest{ProjectID: q.project(), Usage: true}, &out); err != nil {
		return err
	}
	l, u := out.Limits, out.Usage
	return q.json(http.StatusOK, map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": map[string]int64{
		"maxTotalVolumes": l[structs.QuotaVolumes], "maxTotalSnapshots": l[structs.QuotaVolumeSnapshots],
		"maxTotalVolumeGigabytes": l[structs.QuotaGigabytes], "maxTotalBackups": l["backups"],
		"maxTotalBackupGigabytes": l["backup_gigabytes"],
		"totalVolumesUsed":        u[structs.QuotaVolumes], "totalSnapshotsUsed": u[structs.QuotaVolumeSnapshots],
		"totalGigabytesUsed": u[structs.QuotaGigabytes], "totalBackupsUsed": 0, "totalBackupGigabytesUsed": 0,
	}}})
}

// zones answers GET /os-availability-zone: the storage hosts' zones.
func (a *API) zones(q *request) error {
	var out structs.VolumeZonesResponse
	if err := q.call("Volume.Zones", &structs.VolumeZonesRequest{}, &out); err != nil {
		return err
	}
	info := []map[string]any{}
	for _, z := range out.Zones {
		info = append(info, map[string]any{"zoneName": z.Name, "zoneState": map[string]bool{"available": z.Available}})
	}
	return q.json(http.StatusOK, map[string]any{"availabilityZoneInfo": info})
}
