package agent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// maxSnapshotBody bounds a snapshot upload.
const maxSnapshotBody = 1 << 30

func (a *Agent) statusLeader(w http.ResponseWriter, r *http.Request) (any, error) {
	var out structs.StatusResponse
	if err := a.rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &out); err != nil {
		return nil, err
	}
	return out.Leader, nil
}

func (a *Agent) statusPeers(w http.ResponseWriter, r *http.Request) (any, error) {
	var out structs.StatusResponse
	if err := a.rpc.RPC("Status.Peers", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &out); err != nil {
		return nil, err
	}
	if out.Peers == nil {
		out.Peers = []string{}
	}
	return out.Peers, nil
}

// agentSelfResponse is the body of GET /v1/agent/self.
type agentSelfResponse struct {
	Config agentSelfConfig
	Stats  map[string]map[string]string
}

type agentSelfConfig struct {
	NodeName, NodeID, Region, AZ string
	Server, Client               bool
	DataDir                      string
	HTTPAddr, RPCAddr            string
	GossipAddr, Version          string
}

func (a *Agent) agentSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	c := a.config
	out := agentSelfResponse{
		Config: agentSelfConfig{
			NodeName: c.NodeName, NodeID: a.nodeID, Region: c.Region, AZ: c.AZ,
			Server: c.IsServer(), Client: c.IsClient(), DataDir: c.DataDir,
			HTTPAddr: a.httpAddr, RPCAddr: a.RPCAddr(), GossipAddr: a.gossip.Addr(), Version: c.Version,
		},
		Stats: map[string]map[string]string{
			"gossip": {"members": strconv.Itoa(a.gossip.NumMembers())},
		},
	}
	if a.server != nil {
		out.Stats["raft"] = a.server.Raft().Stats()
	}
	return out, nil
}

// memberJSON is one row of GET /v1/agent/members.
type memberJSON struct {
	Name, Addr   string
	Port         int
	Status, Role string
	Region, AZ   string
	RPCAddr, ID  string
	HTTPAddr     string
	Version      string
	Leader       bool
}

func (a *Agent) agentMembers(w http.ResponseWriter, r *http.Request) (any, error) {
	var leader structs.StatusResponse
	// Members are served even when no leader is known: that is when an
	// operator most needs them.
	_ = a.rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &leader)
	members := []memberJSON{}
	for _, m := range a.gossip.Members() {
		members = append(members, memberJSON{
			Name: m.Name, Addr: m.Addr.String(), Port: m.Port, Status: string(m.Status),
			Role: string(m.Meta.Role), Region: m.Meta.Region, AZ: m.Meta.AZ, RPCAddr: m.Meta.RPCAddr,
			ID: m.Meta.ID, HTTPAddr: m.Meta.HTTPAddr, Version: m.Meta.Version,
			Leader: m.Meta.Role == "server" && m.Meta.RPCAddr != "" && m.Meta.RPCAddr == leader.Leader,
		})
	}
	return map[string]any{"ServerName": a.config.NodeName, "ServerRegion": a.config.Region, "Members": members}, nil
}

func (a *Agent) raftConfiguration(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.RaftConfigurationResponse
	if err := a.rpc.RPC("Operator.RaftGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	if out.Servers == nil {
		out.Servers = []*structs.RaftServer{}
	}
	return out, nil
}

func (a *Agent) raftRemovePeer(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.RaftPeerRequest{ID: q.Get("id"), Address: q.Get("address")}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	return nil, a.rpc.RPC("Operator.RaftRemovePeer", &args, &out)
}

func (a *Agent) snapshotSave(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SnapshotResponse
	if err := a.rpc.RPC("Operator.SnapshotSave", &args, &out); err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(out.Data)))
	setIndex(w, out.Index)
	w.WriteHeader(http.StatusOK)
	_, err := io.Copy(w, bytes.NewReader(out.Data))
	if err != nil {
		a.logger.Warn("send snapshot", "error", err)
	}
	return nil, nil
}

func (a *Agent) snapshotRestore(w http.ResponseWriter, r *http.Request) (any, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSnapshotBody))
	if err != nil {
		return nil, fmt.Errorf("read snapshot upload: %w", err)
	}
	if len(data) == 0 {
		return nil, structs.Errorf(structs.KindInvalid, "snapshot body is empty")
	}
	args := structs.SnapshotRestoreRequest{Data: data}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	if err := a.rpc.RPC("Operator.SnapshotRestore", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
