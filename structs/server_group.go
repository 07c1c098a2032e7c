package structs

import "strings"

// Server group policies, as Nova names them.
const (
	PolicyAffinity         = "affinity"
	PolicyAntiAffinity     = "anti-affinity"
	PolicySoftAffinity     = "soft-affinity"
	PolicySoftAntiAffinity = "soft-anti-affinity"
)

// ServerGroupPolicies are the policies a server group may have.
var ServerGroupPolicies = []string{PolicyAffinity, PolicyAntiAffinity, PolicySoftAffinity, PolicySoftAntiAffinity}

// ServerGroup is Nova's server (instance) group: a set of instances the
// scheduler keeps together (affinity) or apart (anti-affinity), strictly
// or, for the soft policies, as far as it can.
type ServerGroup struct {
	// ID is the group's UUID, chosen before proposal.
	ID        string
	Name      string
	ProjectID string
	UserID    string
	Policy    string
	// MaxServerPerHost is the anti-affinity rule max_server_per_host
	// (Nova's 2.64): how many members may share a host. 0 means the
	// rule is not set, which allows one.
	MaxServerPerHost int
	// Members are the ids of the instances created in the group, in
	// order. An instance that is gone stays listed until the group is
	// next written; readers drop members that no longer exist.
	Members []string

	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (g *ServerGroup) Copy() *ServerGroup {
	if g == nil {
		return nil
	}
	c := *g
	c.Members = append([]string(nil), g.Members...)
	return &c
}

// Hard reports whether the policy is one the scheduler must never break
// (affinity or anti-affinity, not the soft ones).
func (g *ServerGroup) Hard() bool {
	return g.Policy == PolicyAffinity || g.Policy == PolicyAntiAffinity
}

// MaxPerHost is how many members an anti-affinity group allows on one
// host: the max_server_per_host rule, 1 without it.
func (g *ServerGroup) MaxPerHost() int {
	if g.MaxServerPerHost > 0 {
		return g.MaxServerPerHost
	}
	return 1
}

// HasMember reports whether id was created in the group.
func (g *ServerGroup) HasMember(id string) bool {
	for _, m := range g.Members {
		if m == id {
			return true
		}
	}
	return false
}

// Validate checks a group's own fields.
func (g *ServerGroup) Validate() error {
	var errs []string
	if name := strings.TrimSpace(g.Name); name == "" || len(g.Name) > 255 {
		errs = append(errs, "name must be 1-255 characters")
	}
	known := false
	for _, p := range ServerGroupPolicies {
		known = known || p == g.Policy
	}
	if !known {
		errs = append(errs, "policy must be one of "+strings.Join(ServerGroupPolicies, ", "))
	}
	if g.MaxServerPerHost < 0 {
		errs = append(errs, "max_server_per_host must be positive")
	}
	if g.MaxServerPerHost > 0 && g.Policy != PolicyAntiAffinity {
		errs = append(errs, "Only anti-affinity policy supports rules.")
	}
	if len(errs) > 0 {
		return Errorf(KindInvalid, "server group: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ServerGroupCreateEntry is the Raft entry that creates a server group.
// Apply checks the project's server_groups quota in the same
// transaction.
type ServerGroupCreateEntry struct {
	Group *ServerGroup
}

// ServerGroupDeleteEntry is the Raft entry that deletes server groups.
// Their members keep running; they are simply no longer grouped.
type ServerGroupDeleteEntry struct {
	GroupIDs []string
}

// ServerGroupCreateRequest creates a group; the server chooses its id.
type ServerGroupCreateRequest struct {
	Group *ServerGroup
	WriteRequest
}

// ServerGroupListRequest lists the groups of one project, or of every
// project when ProjectID is empty.
type ServerGroupListRequest struct {
	ProjectID string
	QueryOptions
}

// ServerGroupSpecificRequest reads or deletes one group.
type ServerGroupSpecificRequest struct {
	GroupID string
	QueryOptions
}

// ServerGroupDeleteRequest deletes one group.
type ServerGroupDeleteRequest struct {
	GroupID string
	WriteRequest
}

// SingleServerGroupResponse answers a read or a create. Members lists
// only instances that still exist.
type SingleServerGroupResponse struct {
	Group *ServerGroup
	QueryMeta
}

// ServerGroupListResponse answers ServerGroupListRequest, groups sorted
// by creation.
type ServerGroupListResponse struct {
	Groups []*ServerGroup
	QueryMeta
}
