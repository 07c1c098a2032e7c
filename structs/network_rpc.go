package structs

// RPC requests and responses of networking (the Net endpoint).

// NetCaller is who asks. The servers apply Neutron's default policy
// with it: a project sees its own objects plus shared and external
// networks; admins see and may change everything, and alone set
// admin-only attributes (shared, router:external, provider:*, bindings).
// A zero caller with Admin is the servers' own (dev seeding, Nova's
// boot path after its own checks).
type NetCaller struct {
	ProjectID string
	Admin     bool
}

// NetWriteRequest creates, updates or deletes one object of Kind.
//
// Create: the object with its attributes; Fields lists those the client
// gave (so defaults and admin-only attributes can be told from given
// ones). Update: ID and the object with the new values of the
// attributes Fields names (Neutron's attribute names); the others are
// kept. Delete: ID.
type NetWriteRequest struct {
	Kind   string
	ID     string
	Fields []string
	Caller NetCaller
	// SubnetID, for a floating IP create, is the subnet of the external
	// network its address comes from (any when empty).
	SubnetID string

	Network       *Network
	Subnet        *Subnet
	Port          *Port
	SecurityGroup *SecurityGroup
	Rule          *SecurityGroupRule
	FloatingIP    *FloatingIP
	Router        *Router
	WriteRequest
}

// Has reports whether the request names an attribute.
func (r *NetWriteRequest) Has(field string) bool {
	for _, f := range r.Fields {
		if f == field {
			return true
		}
	}
	return false
}

// PortBinding is how a port is bound, resolved when it is read: an
// instance's port follows its instance's host.
type PortBinding struct {
	// HostName is binding:host_id, "" when unbound.
	HostName string
	// HostID is the id of the host an instance's port is bound to, and
	// TunnelIP that host's tunnel endpoint: what the dataplanes of the
	// network's other hosts program their forwarding entries from.
	HostID   string `json:",omitempty"`
	TunnelIP string `json:",omitempty"`
	// Status is the port's status: ACTIVE when bound to a host that runs
	// its device, DOWN otherwise (the dataplane will report it).
	Status string
}

// NetObjects carries networking objects, and what their views need
// beyond themselves.
type NetObjects struct {
	Networks           []*Network
	Subnets            []*Subnet
	Ports              []*Port
	SecurityGroups     []*SecurityGroup
	SecurityGroupRules []*SecurityGroupRule
	FloatingIPs        []*FloatingIP
	Routers            []*Router

	// SubnetIDs lists each network's subnets, oldest first.
	SubnetIDs map[string][]string
	// Bindings are the ports' bindings, by port id.
	Bindings map[string]*PortBinding
}

// NetWriteResponse answers a create or update with the object as
// stored (a delete with nothing but the index).
type NetWriteResponse struct {
	NetObjects
	WriteMeta
}

// NetGetRequest reads one object the caller may see.
type NetGetRequest struct {
	Kind   string
	ID     string
	Caller NetCaller
	QueryOptions
}

// NetListRequest lists the objects of Kind the caller may see, oldest
// first, optionally narrowed: by ids, by network (subnets, ports), by
// device (ports), by owner project, or, for ports, by the host their
// instances are placed on (what a host's dataplane must wire). Security
// group lists carry their rules too.
type NetListRequest struct {
	Kind      string
	Caller    NetCaller
	IDs       []string
	NetworkID string
	DeviceIDs []string
	ProjectID string
	HostID    string
	QueryOptions
}

// NetListResponse answers NetGetRequest and NetListRequest.
type NetListResponse struct {
	NetObjects
	QueryMeta
}

// RouterInterfaceRequest adds an interface to a router (on a subnet, at
// its gateway address, or an existing port) or removes one (by subnet
// or port).
type RouterInterfaceRequest struct {
	RouterID string
	SubnetID string
	PortID   string
	Remove   bool
	Caller   NetCaller
	WriteRequest
}

// RouterInterfaceResponse is Neutron's router interface info.
type RouterInterfaceResponse struct {
	RouterID  string
	ProjectID string
	NetworkID string
	PortID    string
	SubnetID  string
	SubnetIDs []string
	WriteMeta
}

// InstanceNetworkRequest is one of the NICs a boot asks for (Nova's
// networks entries): a port on NetworkID (at FixedIP when given), or the
// existing PortID.
type InstanceNetworkRequest struct {
	NetworkID string
	PortID    string
	FixedIP   string
	Tag       string
}

// How a boot asks for networks (InstanceCreateRequest.NetworksMode).
const (
	// NetworksDefault, before Nova's 2.37: a port on the one network
	// available to the project, none when there is none.
	NetworksDefault = ""
	// NetworksAuto: the one network available, else the project's
	// auto-allocated topology (get-me-a-network).
	NetworksAuto = "auto"
	// NetworksNone: no ports.
	NetworksNone = "none"
	// NetworksList: the ports Networks lists.
	NetworksList = "list"
)

// InterfaceAttachRequest creates a port for an instance on NetworkID
// (at FixedIPs when given), or binds the existing PortID to it.
type InterfaceAttachRequest struct {
	InstanceID string
	NetworkID  string
	PortID     string
	FixedIPs   []FixedIP
	Tag        string
	Caller     NetCaller
	WriteRequest
}

// InterfaceDetachRequest removes a port from an instance: a port
// created for it is deleted, a port the user handed it is unbound.
type InterfaceDetachRequest struct {
	InstanceID string
	PortID     string
	Caller     NetCaller
	WriteRequest
}

// InstanceInterface is one NIC of an instance as Nova shows it.
type InstanceInterface struct {
	PortID      string
	NetworkID   string
	NetworkName string
	MACAddress  string
	FixedIPs    []FixedIP
	// FloatingIPs are the floating addresses NATed to the port.
	FloatingIPs []string
	Status      string
	Tag         string
}

// InstanceNetInfo is an instance's networking: its NICs in order and
// the names of their security groups.
type InstanceNetInfo struct {
	Interfaces     []*InstanceInterface
	SecurityGroups []string
}

// NetAddressesRequest reads the networking of instances.
type NetAddressesRequest struct {
	InstanceIDs []string
	QueryOptions
}

// NetAddressesResponse maps instance ids to their networking (missing:
// no ports).
type NetAddressesResponse struct {
	Instances map[string]*InstanceNetInfo
	QueryMeta
}

// NetSeedRequest asks a server for dev mode's networks (Net.SeedDev);
// it is idempotent.
type NetSeedRequest struct {
	WriteRequest
}

// AutoTopologyRequest reads (or, with Create, makes) a project's
// auto-allocated topology.
type AutoTopologyRequest struct {
	ProjectID string
	Create    bool
	Caller    NetCaller
	WriteRequest
}

// AutoTopologyResponse names the topology's network.
type AutoTopologyResponse struct {
	NetworkID string
	ProjectID string
	WriteMeta
}

// NetQuotaRequest reads a project's network quotas (the default class's
// when ProjectID is empty) and, with Usage, what it uses.
type NetQuotaRequest struct {
	ProjectID string
	Usage     bool
	Caller    NetCaller
	QueryOptions
}

// NetQuotaResponse carries limits and usage of the network resources.
type NetQuotaResponse struct {
	Limits map[string]int64
	Usage  map[string]int64
	QueryMeta
}

// NetQuotaUpdateRequest sets a project's network quotas, or with Delete
// drops them back to the defaults (admins only).
type NetQuotaUpdateRequest struct {
	ProjectID string
	Limits    map[string]int64
	Delete    bool
	Caller    NetCaller
	WriteRequest
}
