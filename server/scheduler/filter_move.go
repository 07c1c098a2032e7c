package scheduler

import "github.com/stratus-cloud/stratus/structs"

// MoveDestinationFilter keeps a resize's or cold migration's
// destination to hosts whose driver can receive the instance's disks
// (the migrate capability: the libvirt and fake drivers import the
// copy; VMware and Ironic cannot), so a move in a cloud that mixes
// drivers is placed where it can land instead of failing there. A move
// pinned to its own host (a resize in place) and hosts registered
// without a driver name are not checked, as the servers' up-front
// check does not check them.
type MoveDestinationFilter struct{}

// Name implements Filter.
func (MoveDestinationFilter) Name() string { return "MoveDestinationFilter" }

func (MoveDestinationFilter) applies(req *Request) bool {
	t := req.Instance.Task
	return t != nil && t.DiskToken != "" && t.Kind != structs.TaskKindLiveMigrate && t.TargetHostID != t.SourceHostID
}

// Filter implements Filter.
func (MoveDestinationFilter) Filter(h *HostView, req *Request) (bool, string) {
	if h.Host.Driver == "" || h.Host.HasCapability(structs.HostCapabilityMigrate) {
		return true, ""
	}
	return false, "driver cannot receive a moved disk"
}
