package structs

// VolumeRetypeRequest changes the type of a volume of ProjectID (""
// for admins: any) to NewType (a name or an id), Cinder's os-retype
// with MigrationPolicy "never" or "on-demand".
type VolumeRetypeRequest struct {
	VolumeID        string
	ProjectID       string
	NewType         string
	MigrationPolicy string
	WriteRequest
}
