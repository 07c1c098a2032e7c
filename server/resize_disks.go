package server

import "github.com/stratus-cloud/stratus/structs"

// Nova's words for a resize its disks cannot take: the API's
// CannotResizeDisk (400) and the libvirt driver's "Unable to resize disk
// down", which Stratus says up front, before anything starts, instead of
// failing the resize on the host as Nova's compute does.
const (
	msgResizeZeroDisk = "Server disk was unable to be resized because: Resize to zero disk flavor is not allowed."
	msgResizeDiskDown = "Server disk was unable to be resized because: Unable to resize disk down."
)

// checkResizeDisks refuses a resize from flavor cur to next that would
// shrink a disk: disks are grown in place or copied, never shrunk, since
// the guest's filesystem fills them. A root_gb of 0 (the image's size)
// is reached from no other size, as in Nova.
func checkResizeDisks(cur, next *structs.Flavor) error {
	if cur == nil || next == nil {
		return nil
	}
	switch {
	case next.RootGB == 0 && cur.RootGB != 0:
		return structs.Errorf(structs.KindInvalid, msgResizeZeroDisk)
	case next.RootGB < cur.RootGB, next.EphemeralGB < cur.EphemeralGB:
		return structs.Errorf(structs.KindInvalid, msgResizeDiskDown)
	}
	return nil
}
