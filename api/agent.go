package api

// Agent reads the local agent's configuration and gossip view.
type Agent struct{ c *Client }

// Agent returns a handle on the /v1/agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c} }

// AgentSelf is the answer of /v1/agent/self.
type AgentSelf struct {
	Config *AgentConfig
	// Stats are subsystem ("raft", "serf", …) → name → value.
	Stats map[string]map[string]string
}

// AgentConfig is the part of an agent's configuration it reports.
type AgentConfig struct {
	NodeName   string
	NodeID     string
	Region     string
	AZ         string
	Server     bool
	Client     bool
	DataDir    string
	HTTPAddr   string
	RPCAddr    string
	GossipAddr string
	Version    string
}

// AgentMember is one member of the gossip pool.
type AgentMember struct {
	Name     string
	Addr     string
	Port     int
	Status   string
	Role     string
	Region   string
	AZ       string
	RPCAddr  string
	HTTPAddr string
	ID       string
	Version  string
	Leader   bool
}

// MembersResponse is the answer of /v1/agent/members.
type MembersResponse struct {
	ServerName   string
	ServerRegion string
	Members      []*AgentMember
}

// Self returns the local agent's configuration and stats.
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.c.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members returns the members of the gossip pool as the local agent sees it.
func (a *Agent) Members() (*MembersResponse, error) {
	var out MembersResponse
	if _, err := a.c.query("/v1/agent/members", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
