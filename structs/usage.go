package structs

// InstanceUsage is what a deleted instance used and when, kept so that
// usage reports (Nova's os-simple-tenant-usage) cover instances that no
// longer exist. Live instances are reported from the instances table.
type InstanceUsage struct {
	InstanceID string
	Name       string
	ProjectID  string
	UserID     string
	FlavorName string
	VCPUs      int
	MemoryMB   int
	// LocalGB is root plus ephemeral disk, as Nova counts local_gb.
	LocalGB int
	// State is the instance's vm_state when it was deleted.
	State string
	// CreatedAt and DeletedAt are unix nanoseconds.
	CreatedAt int64
	DeletedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// InstanceUsageRequest reads what a usage report covers
// (os-simple-tenant-usage): all projects', or one's when ProjectID is set.
type InstanceUsageRequest struct {
	ProjectID string
	QueryOptions
}

// InstanceUsageResponse answers InstanceUsageRequest: the live instances
// and the usage records of deleted ones, each by id. An instance is in
// one list or the other, never both.
type InstanceUsageResponse struct {
	Instances []*Instance
	Deleted   []*InstanceUsage
	QueryMeta
}
