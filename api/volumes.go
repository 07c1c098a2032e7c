package api

import (
	"net/http"
	"net/url"
)

// Volumes manages block storage volumes: created in a project (the
// identity token's, or the one named with ForProject), kept by a
// storage host's pool.
type Volumes struct {
	c       *Client
	project string
}

// Volumes returns a handle on the /v1/volumes endpoints.
func (c *Client) Volumes() *Volumes { return &Volumes{c: c} }

// ForProject returns a handle on another project's volumes (an
// operator's call without a token, or an admin token's).
func (v *Volumes) ForProject(projectID string) *Volumes { return &Volumes{c: v.c, project: projectID} }

// Volume is a block storage volume.
type Volume struct {
	ID               string
	ProjectID        string
	UserID           string
	Name             string
	Description      string
	SizeGB           int
	Status           string
	VolumeTypeID     string
	AvailabilityZone string
	Bootable         bool
	Metadata         map[string]string
	ImageID          string
	SnapshotID       string
	SourceVolumeID   string
	// Host is the storage host keeping the volume; ProviderLocation
	// where on it.
	Host             string
	Backend          string
	Format           string
	ProviderLocation string
	ErrorMessage     string
	// CreatedAt and UpdatedAt are in unix nanoseconds.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// VolumeCreate is what a new volume is made of: an empty volume of
// SizeGB, or a copy of an image, a snapshot or another volume.
type VolumeCreate struct {
	Name           string
	Description    string
	SizeGB         int
	ImageID        string
	SnapshotID     string
	SourceVolumeID string
	AZ             string
	ProjectID      string
}

// VolumeSnapshot is a point-in-time copy of a volume.
type VolumeSnapshot struct {
	ID          string
	ProjectID   string
	VolumeID    string
	Name        string
	Description string
	SizeGB      int
	Status      string
	Host        string
	CreatedAt   int64
	UpdatedAt   int64
}

func (v *Volumes) params() url.Values {
	if v.project == "" {
		return nil
	}
	return url.Values{"project": {v.project}}
}

// List returns the project's volumes, oldest first.
func (v *Volumes) List(q *QueryOptions) ([]*Volume, *QueryMeta, error) {
	var out []*Volume
	h, err := v.c.doJSON(&request{method: http.MethodGet, path: "/v1/volumes", params: v.params(), query: q}, nil, &out)
	if err != nil {
		return nil, nil, err
	}
	qm, err := parseQueryMeta(h)
	return out, qm, err
}

// Info returns one volume.
func (v *Volumes) Info(id string, q *QueryOptions) (*Volume, *QueryMeta, error) {
	var out Volume
	h, err := v.c.doJSON(&request{method: http.MethodGet, path: "/v1/volumes/" + url.PathEscape(id), query: q}, nil, &out)
	if err != nil {
		return nil, nil, err
	}
	qm, err := parseQueryMeta(h)
	return &out, qm, err
}

// Create makes a volume; its storage host builds it in the background
// (status creating, then available).
func (v *Volumes) Create(in *VolumeCreate) (*Volume, *WriteMeta, error) {
	body := *in
	if body.ProjectID == "" {
		body.ProjectID = v.project
	}
	var out Volume
	wm, err := v.c.write(http.MethodPost, "/v1/volumes", nil, &body, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete starts a volume's deletion; force deletes from any status but
// attached (admins only).
func (v *Volumes) Delete(id string, force bool) (*WriteMeta, error) {
	var params url.Values
	if force {
		params = url.Values{"force": {"true"}}
	}
	return v.c.delete("/v1/volumes/"+url.PathEscape(id), params)
}

// Snapshot starts a snapshot of a volume; force allows an in-use one.
func (v *Volumes) Snapshot(id, name string, force bool) (*VolumeSnapshot, *WriteMeta, error) {
	var out VolumeSnapshot
	in := map[string]any{"Name": name, "Force": force}
	wm, err := v.c.write(http.MethodPost, "/v1/volumes/"+url.PathEscape(id)+"/snapshot", nil, in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
