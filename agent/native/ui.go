package native

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// The two reads the web UI needs beyond the rest of /v1: the cluster's
// health in one answer, and an instance watch that answers only an
// index.

// ClusterStatus is the body of GET /v1/status/cluster.
type ClusterStatus struct {
	Region string
	// Leader is the leader's RPC address and LeaderName its node name,
	// both "" when no leader is known.
	Leader, LeaderName string
	// Servers are the Raft servers with their gossip status; when the
	// Raft configuration cannot be read (no leader), the servers gossip
	// knows, and RaftError says why.
	Servers   []ClusterServer
	RaftError string `json:",omitempty"`
	// Raft is the Raft statistics of this agent's server (applied_index,
	// commit_index, last_log_index, state, term, …); null on a
	// client-only agent.
	Raft map[string]string
	// Index is the newest Raft index this agent knows: its server's
	// applied index, or the index of the host read on a client-only agent.
	Index uint64
	Hosts ClusterHosts
	// Capacity sums each resource class over the hosts that are up.
	Capacity map[string]HostCapacity
}

type ClusterServer struct {
	ID, Name, Address string
	// Status is the gossip status (alive, suspect, failed, left), or
	// unknown when gossip does not see the server.
	Status        string
	Leader, Voter bool
}

type ClusterHosts struct {
	Total, Up, Down, Disabled, Draining int
}

// statusCluster answers GET /v1/status/cluster: servers and leader, the
// Raft index, hosts up and down and capacity, in one read for dashboards.
// It blocks like GET /v1/hosts (?index=&wait=) and answers the hosts
// table's index; servers and leader are read when it answers.
func (a *API) statusCluster(w http.ResponseWriter, q *request) (any, error) {
	var args structs.HostListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	// Counts and sums for any token: the agent reads the hosts with its
	// own credential unless the caller is an admin (a client agent's
	// node secret may not list hosts: there only admins get them).
	caller := q.rpc
	if s := q.subject; s != nil && !s.IsAdmin() {
		caller = a.cfg.Self
	}
	var hosts structs.HostListResponse
	if err := caller.RPC("Host.List", &args, &hosts); err != nil {
		return nil, err
	}
	setMeta(w, &hosts.QueryMeta)
	out := ClusterStatus{Region: a.cfg.Agent.Region, Servers: []ClusterServer{},
		Capacity: map[string]HostCapacity{}, Index: hosts.Index}
	for _, h := range hosts.Hosts {
		out.Hosts.Total++
		switch {
		case h.Up():
			out.Hosts.Up++
		default:
			out.Hosts.Down++
		}
		if !h.Enabled {
			out.Hosts.Disabled++
		}
		if h.Drain != nil && !h.Drain.Complete {
			out.Hosts.Draining++
		}
		if !h.Up() {
			continue
		}
		for class, c := range newHost(h).Capacity {
			sum := out.Capacity[class]
			sum.Total += c.Total
			sum.Used += c.Used
			sum.Capacity += c.Capacity
			out.Capacity[class] = sum
		}
	}
	if a.cfg.RaftStats != nil {
		stats := a.cfg.RaftStats()
		out.Raft = map[string]string{}
		for _, k := range []string{"state", "term", "applied_index", "commit_index", "last_log_index", "last_snapshot_index", "num_peers"} {
			out.Raft[k] = stats[k]
		}
		if n, err := strconv.ParseUint(stats["applied_index"], 10, 64); err == nil && n > out.Index {
			out.Index = n
		}
	}
	a.clusterServers(&out)
	return out, nil
}

// clusterServers fills the servers and leader from the Raft
// configuration and gossip.
func (a *API) clusterServers(out *ClusterStatus) {
	gossipByID := map[string]gossip.Member{}
	for _, m := range a.cfg.Gossip.Members() {
		if m.Meta.Role == gossip.RoleServer && m.Meta.Region == a.cfg.Agent.Region {
			gossipByID[m.Meta.ID] = m
		}
	}
	var raftConf structs.RaftConfigurationResponse
	err := a.cfg.Self.RPC("Operator.RaftGetConfiguration", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &raftConf)
	if err != nil {
		out.RaftError = structs.Message(err)
		for id, m := range gossipByID {
			out.Servers = append(out.Servers, ClusterServer{ID: id, Name: m.Name, Address: m.Meta.RPCAddr, Status: string(m.Status)})
		}
	}
	for _, s := range raftConf.Servers {
		row := ClusterServer{ID: s.ID, Name: s.Node, Address: s.Address, Leader: s.Leader, Voter: s.Voter, Status: "unknown"}
		if m, ok := gossipByID[s.ID]; ok {
			row.Status = string(m.Status)
			if row.Name == "" {
				row.Name = m.Name
			}
		}
		if s.Leader {
			out.Leader, out.LeaderName = s.Address, row.Name
		}
		out.Servers = append(out.Servers, row)
	}
	sort.Slice(out.Servers, func(i, j int) bool { return out.Servers[i].Name < out.Servers[j].Name })
}

// InstanceWatch is the body of GET /v1/watch/instances.
type InstanceWatch struct {
	Index uint64
}

// watchInstances answers GET /v1/watch/instances: it blocks like
// GET /v1/instances (?index=&wait=) but answers only the instances
// table's index. A client that reads instances elsewhere — the web UI
// reads them through the Compute API, where project policy applies —
// learns when to read again without receiving anyone's instances.
func (a *API) watchInstances(w http.ResponseWriter, q *request) (any, error) {
	var args structs.InstanceListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := q.rpc.RPC("Instance.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return InstanceWatch{Index: out.Index}, nil
}
