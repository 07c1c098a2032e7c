package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// noEvacuateDrivers are the drivers that cannot rebuild an instance of a
// host that is down on another (Nova's supports_evacuate is false for
// them): a bare-metal node or a vCenter cluster's VM is not rebuilt
// elsewhere from this side.
var noEvacuateDrivers = map[string]bool{"ironic": true, "vmware": true}

// checkMoveSupported refuses up front (409) a move the driver of the
// instance's host cannot carry, instead of letting it fail at the
// destination: a cold migration or resize to another host needs a
// driver that hands its disks over (the migrate capability); a resize
// whose host's driver only resizes in place is pinned to that host when
// allow_resize_to_same_host lets it stay. A host that names no driver
// (registered by hand) is taken at its word.
func (s *Server) checkMoveSupported(state *fsm.StateStore, inst *structs.Instance, entry *structs.InstanceTaskEntry) error {
	op := entry.Op
	if op != structs.OpMigrate && op != structs.OpResize && op != structs.OpEvacuate {
		return nil
	}
	h, err := state.HostByID(nil, inst.HostID)
	if err != nil || h == nil || h.Driver == "" {
		return err
	}
	if op == structs.OpEvacuate {
		if noEvacuateDrivers[h.Driver] {
			return structs.Errorf(structs.KindConflict, "Cannot 'evacuate' instance %s: Instance evacuate is not supported by the %s driver of host %s.", inst.ID, h.Driver, h.Name)
		}
		return nil
	}
	if h.HasCapability(structs.HostCapabilityMigrate) {
		return nil
	}
	if op == structs.OpResize && entry.AllowSameHost && h.HasCapability(structs.HostCapabilityResize) &&
		(entry.TargetHostID == "" || entry.TargetHostID == h.ID) {
		entry.TargetHostID = h.ID // in place: its disks cannot leave the host
		return nil
	}
	return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: the %s driver of host %s cannot carry its disks to another host", op, inst.ID, h.Driver, h.Name)
}
