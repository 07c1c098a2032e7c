package structs

// HostForceDownRequest sets or clears a host's ForcedDown.
type HostForceDownRequest struct {
	// HostID is the host's id or name.
	HostID     string
	ForcedDown bool
	WriteRequest
}

// HostForceDownEntry is the Raft entry of a HostForceDownRequest.
type HostForceDownEntry struct {
	HostID     string
	ForcedDown bool
}

// HostDeregisterRequest removes a host that is down and holds nothing
// (Nova's DELETE /os-services/{id}).
type HostDeregisterRequest struct {
	// HostID is the host's id or name.
	HostID string
	WriteRequest
}

// HostDeregisterEntry is the Raft entry of a HostDeregisterRequest.
type HostDeregisterEntry struct {
	HostID string
}
