package structs

// HostAttrDiskExportURL is the host attribute naming where the host's
// agent serves its instances' disks to a move's destination (the base
// URL of its disk export, client/diskxfer). A host without it cannot
// carry disks to another host.
const HostAttrDiskExportURL = "disk_export_url"

// DiskSource names the other end of a move for an agent-to-agent call:
// an allocation, the host that holds it, that host's disk export and the
// token that host accepts for this move. A resize's or cold migration's
// destination fetches the instance's disks from its source with it
// (Allocation.DiskSource); a live migration's source asks its
// destination to prepare with it (Allocation.PrepareDest). It is set by
// the FSM when the destination is placed on another host, and never
// changed in place (Allocation.Copy shares it).
type DiskSource struct {
	AllocID string
	HostID  string
	URL     string
	Token   string
}
