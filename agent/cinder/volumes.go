package cinder

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// listProject is the project a list reads: the caller's, or with
// all_tenants (admins) every project, or the project_id filter's.
func (q *request) listProject() string {
	qs := q.r.URL.Query()
	if q.isAdmin() && truthy(qs.Get("all_tenants")) {
		return qs.Get("project_id")
	}
	return q.project()
}

func truthy(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b || s == "1" || strings.EqualFold(s, "yes")
}

// volumeTypes reads the volume types by id.
func (q *request) volumeTypes() (map[string]*structs.VolumeType, error) {
	var out structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &out); err != nil {
		return nil, err
	}
	m := make(map[string]*structs.VolumeType, len(out.Types))
	for _, t := range out.Types {
		m[t.ID] = t
	}
	return m, nil
}

// listVolumes reads the volumes the query asks for in the order it
// asks (newest first by default, as Cinder sorts them).
func (q *request) listVolumes() ([]*structs.Volume, int, error) {
	keys, err := q.sortParams(volumeSortName)
	if err != nil {
		return nil, 0, err
	}
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: q.listProject()}, &out); err != nil {
		return nil, 0, err
	}
	qs := q.r.URL.Query()
	var meta map[string]string
	if m := qs.Get("metadata"); m != "" {
		if err := json.Unmarshal([]byte(m), &meta); err != nil {
			return nil, 0, errorf(http.StatusBadRequest, "Invalid input received: metadata filter %q is not a JSON object of strings", m)
		}
	}
	var vols []*structs.Volume
	for _, v := range out.Volumes {
		if volumeMatches(v, qs.Get("name"), qs.Get("status"), qs.Get("bootable"), meta) {
			vols = append(vols, v)
		}
	}
	if err := sortBy(vols, keys, volumeColumns); err != nil {
		return nil, 0, err
	}
	total := len(vols)
	page, err := paginate(vols, qs.Get("marker"), qs.Get("limit"), func(v *structs.Volume) string { return v.ID })
	return page, total, err
}

func volumeMatches(v *structs.Volume, name, status, bootable string, meta map[string]string) bool {
	if (name != "" && v.Name != name) || (status != "" && v.Status != status) {
		return false
	}
	if bootable != "" && truthy(bootable) != v.Bootable {
		return false
	}
	for k, want := range meta {
		if got, ok := v.Metadata[k]; !ok || got != want {
			return false
		}
	}
	return true
}

// paginate applies marker and limit as Cinder does: the page starts
// after the marker's item, which must be in the list.
func paginate[T any](items []T, marker, limit string, id func(T) string) ([]T, error) {
	if marker != "" {
		i := slices.IndexFunc(items, func(it T) bool { return id(it) == marker })
		if i < 0 {
			return nil, errorf(http.StatusBadRequest, "Invalid input received: marker [%s] not found", marker)
		}
		items = items[i+1:]
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "limit param must be an integer")
		}
		if n < 0 {
			return nil, errorf(http.StatusBadRequest, "limit param must be positive")
		}
		items = items[:min(n, len(items))]
	}
	return items, nil
}

// volumeList answers GET /volumes.
func (a *API) volumeList(q *request) error {
	vols, total, err := q.listVolumes()
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, v := range vols {
		out = append(out, q.volumeSummary(v))
	}
	body := map[string]any{"volumes": out}
	q.pageLinks(body, "volumes", "volumes", len(vols), func(i int) string { return vols[i].ID })
	if q.at(mvCountInfo) && truthy(q.r.URL.Query().Get("with_count")) {
		body["count"] = total
	}
	return q.json(http.StatusOK, body)
}

// pageLinks adds Cinder's "<collection>_links" next link when a page
// filled its limit, the marker its last item, so clients page on.
func (q *request) pageLinks(body map[string]any, collection, path string, n int, id func(int) string) {
	qs := q.r.URL.Query()
	limit, err := strconv.Atoi(qs.Get("limit"))
	if err != nil || limit < 1 || n < limit {
		return
	}
	qs.Set("marker", id(n-1))
	body[collection+"_links"] = []map[string]string{{"rel": "next", "href": q.base + "/" + path + "?" + qs.Encode()}}
}

// volumeDetailList answers GET /volumes/detail.
func (a *API) volumeDetailList(q *request) error {
	vols, total, err := q.listVolumes()
	if err != nil {
		return err
	}
	types, err := q.volumeTypes()
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, v := range vols {
		out = append(out, q.volumeDetail(v, types))
	}
	body := map[string]any{"volumes": out}
	q.pageLinks(body, "volumes", "volumes/detail", len(vols), func(i int) string { return vols[i].ID })
	if q.at(mvCountInfo) && truthy(q.r.URL.Query().Get("with_count")) {
		body["count"] = total
	}
	return q.json(http.StatusOK, body)
}

// ownerScope is the project a call about one resource is confined to:
// the caller's, none for admins (who reach every project's).
func (q *request) ownerScope() string {
	if q.isAdmin() {
		return ""
	}
	return q.project()
}

// getVolume reads one volume the caller may see.
func (q *request) getVolume(id string) (*structs.Volume, error) {
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: id, ProjectID: q.ownerScope()}, &out); err != nil {
		return nil, err
	}
	return out.Volume, nil
}

// answerVolume answers status with one volume's detail.
func (q *request) answerVolume(status int, v *structs.Volume) error {
	types, err := q.volumeTypes()
	if err != nil {
		return err
	}
	return q.json(status, map[string]any{"volume": q.volumeDetail(v, types)})
}

// volumeShow answers GET /volumes/{id}.
func (a *API) volumeShow(q *request) error {
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	return q.answerVolume(http.StatusOK, v)
}

// volumeUpdateBody is PUT /volumes/{id}'s body; display_name and
// display_description are the v1 names Cinder still takes.
type volumeUpdateBody struct {
	Volume *struct {
		Name               *string           `json:"name"`
		Description        *string           `json:"description"`
		DisplayName        *string           `json:"display_name"`
		DisplayDescription *string           `json:"display_description"`
		Metadata           map[string]string `json:"metadata"`
	} `json:"volume"`
}

// volumeUpdate answers PUT /volumes/{id}: name, description and
// metadata (replaced, as Cinder's update does).
func (a *API) volumeUpdate(q *request) error {
	var body volumeUpdateBody
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Volume == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'volume' in request body.")
	}
	u := body.Volume
	req := &structs.VolumeUpdateRequest{VolumeID: q.param("id"), ProjectID: q.ownerScope(),
		Name: firstNonNil(u.Name, u.DisplayName), Description: firstNonNil(u.Description, u.DisplayDescription)}
	if u.Metadata != nil {
		if err := checkMetadata(u.Metadata); err != nil {
			return err
		}
		req.Metadata, req.ReplaceMetadata = u.Metadata, true
	}
	if req.Name != nil && len(*req.Name) > 255 {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute name. Value: %s. is too long", *req.Name)
	}
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Update", req, &out); err != nil {
		return err
	}
	return q.answerVolume(http.StatusOK, out.Volume)
}

func firstNonNil(a, b *string) *string {
	if a != nil {
		return a
	}
	return b
}

// checkMetadata applies Cinder's limits on metadata keys and values.
func checkMetadata(m map[string]string) error {
	for k, v := range m {
		if k == "" || len(k) > 255 {
			return errorf(http.StatusBadRequest, "Invalid input received: Metadata property key blank or greater than 255 characters.")
		}
		if len(v) > 255 {
			return errorf(http.StatusBadRequest, "Invalid input received: Metadata property value greater than 255 characters.")
		}
	}
	return nil
}

// volumeDelete answers DELETE /volumes/{id}: 202, the storage host
// deletes it; ?cascade=true deletes its snapshots first and, from
// 3.23, ?force=true (admins) any status but attached
// (volume_delete.go).
func (a *API) volumeDelete(q *request) error {
	req, err := q.deleteParams()
	if err != nil {
		return err
	}
	if err := q.call("Volume.Delete", req, &structs.GenericResponse{}); err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
