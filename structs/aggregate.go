package structs

// DefaultAvailabilityZone is Nova's default_availability_zone: the zone
// of a host that no aggregate puts in a zone and whose agent configures
// none.
const DefaultAvailabilityZone = "nova"

// AggregateAZKey is the aggregate metadata key that makes an aggregate an
// availability zone.
const AggregateAZKey = "availability_zone"

// Aggregate is a host aggregate: a named set of hosts with metadata the
// scheduler reads (availability_zone, filter_tenant_id*, keys flavors'
// aggregate_instance_extra_specs match).
type Aggregate struct {
	// ID is Nova's integer id: the Raft index that created it.
	ID int64
	// UUID is chosen before proposal (Nova's 2.41).
	UUID string
	Name string
	// Hosts are host ids, in the order they were added.
	Hosts    []string
	Metadata map[string]string

	CreatedAt int64
	// UpdatedAt is 0 until the aggregate's name or metadata change.
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (a *Aggregate) Copy() *Aggregate {
	if a == nil {
		return nil
	}
	c := *a
	c.Hosts = append([]string(nil), a.Hosts...)
	c.Metadata = copyStringMap(a.Metadata)
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	return &c
}

// AZ is the availability zone the aggregate defines, "" for none.
func (a *Aggregate) AZ() string { return a.Metadata[AggregateAZKey] }

// HasHost reports whether the host id is in the aggregate.
func (a *Aggregate) HasHost(id string) bool {
	for _, h := range a.Hosts {
		if h == id {
			return true
		}
	}
	return false
}

// EffectiveAZ is a host's availability zone: the zone of an aggregate
// that contains it (a host is never in two zones), else the zone its
// agent configures, else DefaultAvailabilityZone. aggs may be every
// aggregate or only the host's.
func EffectiveAZ(h *Host, aggs []*Aggregate) string {
	for _, a := range aggs {
		if az := a.AZ(); az != "" && a.HasHost(h.ID) {
			return az
		}
	}
	if h.AZ != "" {
		return h.AZ
	}
	return DefaultAvailabilityZone
}

// Aggregate operations, the Op of an AggregateEntry.
const (
	AggregateOpCreate      = "create"
	AggregateOpUpdate      = "update"
	AggregateOpDelete      = "delete"
	AggregateOpAddHost     = "add_host"
	AggregateOpRemoveHost  = "remove_host"
	AggregateOpSetMetadata = "set_metadata"
)

// AggregateEntry is the Raft entry of every aggregate change. Apply
// checks what depends on the state (unique names, one zone per host,
// empty aggregates on delete, hosts without instances when a zone
// changes), so concurrent changes cannot break those rules.
type AggregateEntry struct {
	Op string
	// AggregateID names the aggregate of every op but create.
	AggregateID int64
	// UUID and Name are create's; Name is also update's (empty leaves
	// it).
	UUID string
	Name string
	// AZ, for create and update, is the availability_zone metadata;
	// nil leaves it (update) or sets none (create).
	AZ *string
	// HostID is add_host's and remove_host's host.
	HostID string
	// SetMetadata and DeleteMetadata are set_metadata's changes.
	SetMetadata    map[string]string
	DeleteMetadata []string
	At             int64
}

// AggregateCreateRequest creates an aggregate, optionally a zone.
type AggregateCreateRequest struct {
	Name string
	// AZ is the availability zone; "" for none.
	AZ string
	WriteRequest
}

// AggregateUpdateRequest renames an aggregate or changes its zone; nil
// fields stay as they are.
type AggregateUpdateRequest struct {
	AggregateID int64
	Name        *string
	AZ          *string
	WriteRequest
}

// AggregateHostRequest adds a host to, or removes it from, an
// aggregate. Host is the host's id or name.
type AggregateHostRequest struct {
	AggregateID int64
	Host        string
	WriteRequest
}

// AggregateMetadataRequest changes an aggregate's metadata: Set adds or
// replaces keys, Delete removes them (Nova's null values).
type AggregateMetadataRequest struct {
	AggregateID int64
	Set         map[string]string
	Delete      []string
	WriteRequest
}

// AggregateDeleteRequest deletes an empty aggregate.
type AggregateDeleteRequest struct {
	AggregateID int64
	WriteRequest
}

// AggregateSpecificRequest reads one aggregate.
type AggregateSpecificRequest struct {
	AggregateID int64
	QueryOptions
}

// AggregateListRequest lists every aggregate.
type AggregateListRequest struct {
	QueryOptions
}

// SingleAggregateResponse answers a read or a write of one aggregate
// with the aggregate as it is after it.
type SingleAggregateResponse struct {
	Aggregate *Aggregate
	QueryMeta
}

// AggregateListResponse answers AggregateListRequest, sorted by id.
type AggregateListResponse struct {
	Aggregates []*Aggregate
	QueryMeta
}
