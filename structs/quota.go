package structs

import "sort"

// Quota resources. The first seven are enforced; the others are Nova's
// legacy resources, stored and shown for compatibility only.
const (
	QuotaInstances          = "instances"
	QuotaCores              = "cores"
	QuotaRAM                = "ram"
	QuotaKeyPairs           = "key_pairs"
	QuotaServerGroups       = "server_groups"
	QuotaServerGroupMembers = "server_group_members"
	QuotaMetadataItems      = "metadata_items"
)

// QuotaUnlimited is the limit that never refuses.
const QuotaUnlimited int64 = -1

// DefaultQuotas are Nova's default quotas, the built-in default class.
var DefaultQuotas = map[string]int64{
	QuotaCores:                    20,
	"fixed_ips":                   -1,
	"floating_ips":                -1,
	"injected_file_content_bytes": 10240,
	"injected_file_path_bytes":    255,
	"injected_files":              5,
	QuotaInstances:                10,
	QuotaKeyPairs:                 100,
	QuotaMetadataItems:            128,
	QuotaRAM:                      51200,
	"security_group_rules":        -1,
	"security_groups":             -1,
	QuotaServerGroups:             10,
	QuotaServerGroupMembers:       10,
}

// QuotaResources lists every quota resource name, sorted.
func QuotaResources() []string {
	out := make([]string, 0, len(DefaultQuotas))
	for k := range DefaultQuotas {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Quota scopes: a project's own limits, or a quota class's (Nova's
// "default" class holds the editable defaults).
const (
	QuotaScopeProject = "project"
	QuotaScopeClass   = "class"
)

// QuotaDefaultClass is the class whose limits apply to every project
// without its own.
const QuotaDefaultClass = "default"

// QuotaSet is the limits stored for a project or a class; a resource it
// does not name falls back to the default class, then to DefaultQuotas.
// -1 is unlimited.
type QuotaSet struct {
	Scope  string
	ID     string
	Limits map[string]int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (q *QuotaSet) Copy() *QuotaSet {
	if q == nil {
		return nil
	}
	c := *q
	c.Limits = copyInt64Map(q.Limits)
	return &c
}

// QuotaEntry is the Raft entry that changes a project's or a class's
// limits: Set merges into them; Delete drops the project's own limits
// (back to the defaults).
type QuotaEntry struct {
	Scope  string
	ID     string
	Set    map[string]int64
	Delete bool
	// CheckUsage refuses a project's limit below what it already uses,
	// checked in the entry itself so that no create applied between the
	// API's check and the write can slip under the new limit. Set only
	// once every server is at FSMLevelQuotaUsageCheck (an older one
	// would ignore it and apply what the others refuse).
	CheckUsage bool
}

// QuotaGetRequest reads a project's effective limits and, with Usage,
// what it uses (key pairs: UserID's).
type QuotaGetRequest struct {
	ProjectID string
	UserID    string
	Usage     bool
	QueryOptions
}

// QuotaClassRequest reads a quota class's effective limits.
type QuotaClassRequest struct {
	Class string
	QueryOptions
}

// QuotaResponse carries effective limits for every resource, and usage
// when asked for.
type QuotaResponse struct {
	Limits map[string]int64
	Usage  map[string]int64
	QueryMeta
}

// QuotaUpdateRequest sets limits of a project (Scope project) or of a
// class. A project's new limit below what it uses is refused unless
// Force is set, as in Nova.
type QuotaUpdateRequest struct {
	Scope  string
	ID     string
	Limits map[string]int64
	Force  bool
	WriteRequest
}

// QuotaDeleteRequest drops a project's own limits.
type QuotaDeleteRequest struct {
	ProjectID string
	WriteRequest
}
