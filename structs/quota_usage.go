package structs

// InstanceQuotaUsage is what a project, or one user in a project, uses
// of the instance quotas: its instances, their cores and their RAM. The
// FSM keeps one per project and one per (project, user) up to date on
// every instance write, so that a boot's quota check reads a counter
// instead of walking the project's instances. It is derived state: it
// is never written to a snapshot or a log entry, and a restore rebuilds
// it from the instances.
type InstanceQuotaUsage struct {
	ProjectID string
	// UserID is empty on a project's total.
	UserID string

	Instances int64
	Cores     int64
	RAM       int64
}

// Add adds n instances, cores and ram (each may be negative).
func (u *InstanceQuotaUsage) Add(n, cores, ram int64) {
	u.Instances += n
	u.Cores += cores
	u.RAM += ram
}

// Zero reports whether nothing is used.
func (u *InstanceQuotaUsage) Zero() bool {
	return u.Instances == 0 && u.Cores == 0 && u.RAM == 0
}

// Map returns the usage keyed by quota resource name.
func (u *InstanceQuotaUsage) Map() map[string]int64 {
	m := map[string]int64{QuotaInstances: 0, QuotaCores: 0, QuotaRAM: 0}
	if u != nil {
		m[QuotaInstances], m[QuotaCores], m[QuotaRAM] = u.Instances, u.Cores, u.RAM
	}
	return m
}

// QuotaUse is what an instance counts against its project's and user's
// instance quotas: nothing when it has no project or is (soft-)deleted,
// as in Nova; otherwise one instance and its flavor's cores and RAM, or
// while a resize is in progress the larger of its two flavors, so that
// what the resize was admitted against stays reserved until it ends.
func (i *Instance) QuotaUse() (n, cores, ram int64) {
	if i == nil || i.ProjectID == "" || i.VMState == VMStateSoftDeleted || i.VMState == VMStateDeleted {
		return 0, 0, 0
	}
	cores, ram = flavorQuotaSize(i.Flavor)
	if i.Task != nil && i.Task.NewFlavor != nil {
		c, r := flavorQuotaSize(i.Task.NewFlavor)
		cores, ram = max(cores, c), max(ram, r)
	}
	return 1, cores, ram
}

func flavorQuotaSize(f *Flavor) (cores, ram int64) {
	if f == nil {
		return 0, 0
	}
	return int64(f.VCPUs), int64(f.MemoryMB)
}
