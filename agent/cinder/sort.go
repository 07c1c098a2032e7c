package cinder

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// sortKey is one column of a list's order and its direction.
type sortKey struct {
	key  string
	desc bool
}

// sortParams reads sort=key[:dir],… or the deprecated sort_key and
// sort_dir as Cinder's get_sort_params and process_sort_params do: the
// default is created_at desc, created_at and id are always appended
// (in the first key's direction), and naming both forms is a 400.
// rename maps the API's names of a column to the database's
// ("name" is display_name).
func (q *request) sortParams(rename func(string) string) ([]sortKey, error) {
	qs := q.r.URL.Query()
	_, hasSort := qs["sort"]
	_, hasKey := qs["sort_key"]
	_, hasDir := qs["sort_dir"]
	if hasSort && (hasKey || hasDir) {
		return nil, errorf(http.StatusBadRequest, "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.")
	}
	var keys, dirs []string
	if hasSort {
		for _, part := range strings.Split(strings.TrimSpace(qs.Get("sort")), ",") {
			key, dir, _ := strings.Cut(part, ":")
			if dir == "" {
				dir = "desc"
			}
			keys, dirs = append(keys, strings.TrimSpace(key)), append(dirs, strings.TrimSpace(dir))
		}
	} else {
		key, dir := "created_at", "desc"
		if hasKey {
			key = qs.Get("sort_key")
		}
		if hasDir {
			dir = qs.Get("sort_dir")
		}
		keys, dirs = []string{strings.TrimSpace(key)}, []string{strings.TrimSpace(dir)}
	}
	out := make([]sortKey, 0, len(keys)+2)
	for i, k := range keys {
		if dirs[i] != "asc" && dirs[i] != "desc" {
			return nil, errorf(http.StatusBadRequest, "Invalid input received: Unknown sort direction, must be 'desc' or 'asc'.")
		}
		out = append(out, sortKey{key: rename(k), desc: dirs[i] == "desc"})
	}
	for _, k := range []string{"created_at", "id"} {
		if !slices.ContainsFunc(out, func(s sortKey) bool { return s.key == k }) {
			out = append(out, sortKey{key: k, desc: out[0].desc})
		}
	}
	return out, nil
}

// sortBy orders items by keys, each read through columns; a key that is
// not a column of Cinder's table is Cinder's 400. A column Cinder has
// and Stratus does not keep (ec2_id, cluster_name…) is accepted, as
// Cinder accepts it, and orders nothing: it holds one value in every
// row.
func sortBy[T any](items []T, keys []sortKey, columns map[string]func(T) any) error {
	for _, k := range keys {
		if _, ok := columns[k.key]; !ok {
			return errorf(http.StatusBadRequest, "Invalid input received: Invalid sort key")
		}
	}
	slices.SortStableFunc(items, func(a, b T) int {
		for _, k := range keys {
			col := columns[k.key]
			if col == nil {
				continue
			}
			c := compareValues(col(a), col(b))
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return nil
}

// compareValues orders two values of one column (strings, integers or
// booleans; false before true as in SQL).
func compareValues(a, b any) int {
	switch x := a.(type) {
	case string:
		return cmp.Compare(x, b.(string))
	case int64:
		return cmp.Compare(x, b.(int64))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}

// nullColumns adds the columns of Cinder's tables that Stratus does not
// keep: accepted as sort keys, ordering nothing.
func nullColumns[T any](m map[string]func(T) any, names ...string) map[string]func(T) any {
	for _, n := range names {
		m[n] = nil
	}
	return m
}

// volumeColumns are the columns of Cinder's volumes table, read from a
// volume; the order of created_at ties is the FSM's creation order.
var volumeColumns = nullColumns(map[string]func(*structs.Volume) any{
	"id":                  func(v *structs.Volume) any { return v.ID },
	"user_id":             func(v *structs.Volume) any { return v.UserID },
	"project_id":          func(v *structs.Volume) any { return v.ProjectID },
	"snapshot_id":         func(v *structs.Volume) any { return v.SnapshotID },
	"host":                func(v *structs.Volume) any { return v.Host },
	"size":                func(v *structs.Volume) any { return int64(v.SizeGB) },
	"availability_zone":   func(v *structs.Volume) any { return v.AvailabilityZone },
	"status":              func(v *structs.Volume) any { return v.Status },
	"attach_status":       func(v *structs.Volume) any { return v.AttachStatus() },
	"display_name":        func(v *structs.Volume) any { return v.Name },
	"display_description": func(v *structs.Volume) any { return v.Description },
	"provider_location":   func(v *structs.Volume) any { return v.ProviderLocation },
	"volume_type_id":      func(v *structs.Volume) any { return v.VolumeTypeID },
	"source_volid":        func(v *structs.Volume) any { return v.SourceVolumeID },
	"bootable":            func(v *structs.Volume) any { return v.Bootable },
	"multiattach":         func(v *structs.Volume) any { return v.Multiattach },
	"created_at":          func(v *structs.Volume) any { return int64(v.CreateIndex) },
	"updated_at":          func(v *structs.Volume) any { return v.UpdatedAt },
}, "_name_id", "use_quota", "ec2_id", "cluster_name", "migration_status", "scheduled_at",
	"launched_at", "terminated_at", "provider_auth", "provider_geometry", "provider_id",
	"encryption_key_id", "consistencygroup_id", "group_id", "replication_status",
	"replication_extended_status", "replication_driver_data", "previous_status",
	"service_uuid", "shared_targets", "deleted_at", "deleted")

// snapshotColumns are the columns of Cinder's snapshots table.
var snapshotColumns = nullColumns(map[string]func(*structs.VolumeSnapshot) any{
	"id":                  func(s *structs.VolumeSnapshot) any { return s.ID },
	"user_id":             func(s *structs.VolumeSnapshot) any { return s.UserID },
	"project_id":          func(s *structs.VolumeSnapshot) any { return s.ProjectID },
	"volume_id":           func(s *structs.VolumeSnapshot) any { return s.VolumeID },
	"status":              func(s *structs.VolumeSnapshot) any { return s.Status },
	"progress":            func(s *structs.VolumeSnapshot) any { return snapshotProgress(s.Status) },
	"volume_size":         func(s *structs.VolumeSnapshot) any { return int64(s.SizeGB) },
	"display_name":        func(s *structs.VolumeSnapshot) any { return s.Name },
	"display_description": func(s *structs.VolumeSnapshot) any { return s.Description },
	"provider_location":   func(s *structs.VolumeSnapshot) any { return s.ProviderLocation },
	"created_at":          func(s *structs.VolumeSnapshot) any { return int64(s.CreateIndex) },
	"updated_at":          func(s *structs.VolumeSnapshot) any { return s.UpdatedAt },
}, "use_quota", "cgsnapshot_id", "group_snapshot_id", "scheduled_at", "encryption_key_id",
	"volume_type_id", "provider_id", "provider_auth", "deleted_at", "deleted")

// volumeSortName maps the volume list's "name" to display_name, as
// Cinder's volumes controller always does.
func volumeSortName(k string) string {
	if k == "name" {
		return "display_name"
	}
	return k
}

// snapshotSortName maps "name" to display_name from 3.30; before, as in
// Cinder, "name" is no column and an invalid key.
func (q *request) snapshotSortName(k string) string {
	if k == "name" && q.at(mvSnapshotSort) {
		return "display_name"
	}
	return k
}
