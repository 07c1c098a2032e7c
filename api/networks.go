package api

import (
	"net/http"
	"net/url"
)

// Networks manages networks; Subnets and Ports their subnets and ports.
// The native API is the operator's: every project's objects.
type Networks struct{ c *Client }

// Subnets manages subnets.
type Subnets struct{ c *Client }

// Ports manages ports.
type Ports struct{ c *Client }

// Networks returns a handle on the /v1/networks endpoints.
func (c *Client) Networks() *Networks { return &Networks{c} }

// Subnets returns a handle on the /v1/subnets endpoints.
func (c *Client) Subnets() *Subnets { return &Subnets{c} }

// Ports returns a handle on the /v1/ports endpoints.
func (c *Client) Ports() *Ports { return &Ports{c} }

// Network is an isolated layer-2 network (Neutron's network).
type Network struct {
	ID                  string
	Name                string
	Description         string
	ProjectID           string
	AdminStateUp        bool
	Shared              bool
	External            bool
	IsDefault           bool
	MTU                 int
	PortSecurityEnabled bool
	NetworkType         string
	PhysicalNetwork     string
	SegmentationID      int
	// Subnets are the ids of its subnets (read only).
	Subnets     []string `json:",omitempty"`
	CreateIndex uint64
	ModifyIndex uint64
}

// IPRange is an allocation pool.
type IPRange struct {
	Start string
	End   string
}

// Subnet is an IP range of a network.
type Subnet struct {
	ID              string
	Name            string
	Description     string
	ProjectID       string
	NetworkID       string
	IPVersion       int
	CIDR            string
	GatewayIP       string
	AllocationPools []IPRange
	DNSNameservers  []string
	EnableDHCP      bool
	CreateIndex     uint64
	ModifyIndex     uint64
}

// FixedIP is one of a port's addresses: an empty IPAddress asks for any
// free address of SubnetID.
type FixedIP struct {
	SubnetID  string
	IPAddress string
}

// Port is a virtual NIC's place on a network.
type Port struct {
	ID             string
	Name           string
	Description    string
	ProjectID      string
	NetworkID      string
	AdminStateUp   bool
	MACAddress     string
	FixedIPs       []FixedIP
	DeviceID       string
	DeviceOwner    string
	SecurityGroups []string
	// BindingHost and Status are read only: the host the port is bound
	// to and whether it is up.
	BindingHost string `json:",omitempty"`
	Status      string `json:",omitempty"`
	CreateIndex uint64
	ModifyIndex uint64
}

// List returns every network.
func (n *Networks) List(q *QueryOptions) ([]*Network, *QueryMeta, error) {
	var out []*Network
	qm, err := n.c.query("/v1/networks", &out, q)
	return out, qm, err
}

// Info returns a network by id or name.
func (n *Networks) Info(idOrName string, q *QueryOptions) (*Network, *QueryMeta, error) {
	var out Network
	qm, err := n.c.query("/v1/networks/"+url.PathEscape(idOrName), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Create creates a network and returns it as stored.
func (n *Networks) Create(net *Network) (*Network, *WriteMeta, error) {
	var out Network
	in := *net
	in.Subnets = nil
	wm, err := n.c.write(http.MethodPost, "/v1/networks", nil, &in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes a network (by id or name) and its subnets.
func (n *Networks) Delete(idOrName string) (*WriteMeta, error) {
	return n.c.delete("/v1/networks/"+url.PathEscape(idOrName), nil)
}

// List returns every subnet, or one network's.
func (s *Subnets) List(network string, q *QueryOptions) ([]*Subnet, *QueryMeta, error) {
	var out []*Subnet
	qm, err := s.c.listIn("/v1/subnets", network, &out, q)
	return out, qm, err
}

// Create creates a subnet and returns it as stored.
func (s *Subnets) Create(sub *Subnet) (*Subnet, *WriteMeta, error) {
	var out Subnet
	wm, err := s.c.write(http.MethodPost, "/v1/subnets", nil, sub, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes a subnet by id or name.
func (s *Subnets) Delete(idOrName string) (*WriteMeta, error) {
	return s.c.delete("/v1/subnets/"+url.PathEscape(idOrName), nil)
}

// List returns every port, or one network's.
func (p *Ports) List(network string, q *QueryOptions) ([]*Port, *QueryMeta, error) {
	var out []*Port
	qm, err := p.c.listIn("/v1/ports", network, &out, q)
	return out, qm, err
}

// Create creates a port and returns it as stored.
func (p *Ports) Create(port *Port) (*Port, *WriteMeta, error) {
	var out Port
	in := *port
	in.BindingHost, in.Status = "", ""
	wm, err := p.c.write(http.MethodPost, "/v1/ports", nil, &in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes a port by id or name.
func (p *Ports) Delete(idOrName string) (*WriteMeta, error) {
	return p.c.delete("/v1/ports/"+url.PathEscape(idOrName), nil)
}

// listIn GETs a list, narrowed to a network when one is given.
func (c *Client) listIn(path, network string, out any, q *QueryOptions) (*QueryMeta, error) {
	var params url.Values
	if network != "" {
		params = url.Values{"network": {network}}
	}
	h, err := c.doJSON(&request{method: http.MethodGet, path: path, params: params, query: q}, nil, out)
	if err != nil {
		return nil, err
	}
	return parseQueryMeta(h)
}
