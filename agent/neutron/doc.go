// Package neutron serves OpenStack's Networking API v2.0 (Neutron's wire
// format) under /network, so that unmodified OpenStack clients —
// python-openstackclient, openstacksdk, gophercloud, Terraform — can
// manage networks, subnets, ports, security groups and their rules,
// floating IPs and routers.
//
// The package owns the Neutron wire format at the edge and nothing
// else: the objects live in the servers' Raft state and are reached
// through the Net RPC endpoint, which also applies Neutron's default
// policy for the caller this package names. A request goes through the
// same steps for every resource: a request id, Keystone token
// verification through agent/identity, routing through a declarative
// table, attribute validation as strict as Neutron's (unknown and
// read-only attributes are 400s), then Neutron's JSON views with its
// filters (any attribute, repeated values OR-ed), fields, sorting and
// pagination, and its error bodies ({"NeutronError": {"type",
// "message", "detail"}}).
//
// It must not hold state.
package neutron
