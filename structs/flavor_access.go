package structs

// FlavorAccessRequest adds a project to, or removes one from, a private
// flavor's access list (Nova's addTenantAccess/removeTenantAccess).
type FlavorAccessRequest struct {
	FlavorID string
	// AddProject and RemoveProject: exactly one is set.
	AddProject    string
	RemoveProject string
	WriteRequest
}

// FlavorAccessEntry is the Raft entry of a FlavorAccessRequest.
type FlavorAccessEntry struct {
	FlavorID      string
	AddProject    string
	RemoveProject string
}

// CanUse reports whether a project may see and boot a flavor: any
// public, enabled one, and a private one that lists it.
func (f *Flavor) CanUse(projectID string) bool {
	if f.IsPublic {
		return !f.Disabled
	}
	for _, p := range f.Projects {
		if p == projectID {
			return !f.Disabled
		}
	}
	return false
}
