package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Disks follow a resize or cold migration to another host: the placed
// destination learns where to fetch them (DiskSource) and the source
// which token to accept (DiskExportToken). The token is the leader's
// (InstanceTaskEntry.DiskToken): the FSM draws nothing. A source desired
// running again (revert, failed move) stops exporting (setDesired), as
// its guest may write to the disks from then on.
//
// A live migration to another host uses the same token the other way
// round: the destination accepts it (DiskExportToken) and the source
// asks the destination with it to prepare (PrepareDest) before it
// sends the guest.

// shareDisks gives a move's destination a on another host the source's
// disks, returning the source as updated. Moves without a token (from
// servers older than FSMLevelDiskCopy) and same-host resizes, which keep
// their disks in place, change nothing.
func (t *taskTxn) shareDisks(task *structs.Task, a, src *structs.Allocation) (*structs.Allocation, error) {
	if task.DiskToken == "" || src == nil || a.HostID == src.HostID {
		return src, nil
	}
	h, err := t.host(src.HostID)
	if err != nil {
		return nil, err
	}
	ds := &structs.DiskSource{AllocID: src.ID, HostID: src.HostID, Token: task.DiskToken}
	if h != nil {
		// Without an export the destination's fetch fails, and the move
		// with it: nothing is built on fresh disks in its place.
		ds.URL = h.Attributes[structs.HostAttrDiskExportURL]
	}
	a.DiskSource = ds
	return t.command(src, func(c *structs.Allocation) { c.DiskExportToken = task.DiskToken })
}

// prepareDest gives a live migration's destination a on another host
// the task's token, and returns what the source src asks it with: nil
// for moves without a token (servers older than FSMLevelLivePrepare)
// and without a source. A destination that publishes no disk export
// (host dest) gets an empty URL, and the source then migrates
// unprepared.
func (t *taskTxn) prepareDest(task *structs.Task, a, src *structs.Allocation, dest *structs.Host) *structs.DiskSource {
	if task.DiskToken == "" || src == nil || a.HostID == src.HostID {
		return nil
	}
	a.DiskExportToken = task.DiskToken
	ds := &structs.DiskSource{AllocID: a.ID, HostID: a.HostID, Token: task.DiskToken}
	if dest != nil {
		ds.URL = dest.Attributes[structs.HostAttrDiskExportURL]
	}
	return ds
}
