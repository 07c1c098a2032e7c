package structs

import "slices"

// VolumeTypeAccessEntry gives a project access to a private volume
// type, or with Remove takes it away (os-volume-type-access).
type VolumeTypeAccessEntry struct {
	TypeID    string
	ProjectID string
	Remove    bool
}

// VolumeTypeAccessRequest is VolumeTypeAccessEntry's RPC (admins).
type VolumeTypeAccessRequest struct {
	TypeID    string
	ProjectID string
	Remove    bool
	WriteRequest
}

// UsableBy reports whether a project may see and use the type: a
// public one, or a private one the project was given access to.
func (t *VolumeType) UsableBy(projectID string) bool {
	return t.IsPublic || slices.Contains(t.Projects, projectID)
}
