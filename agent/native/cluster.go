package native

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

func (a *API) statusLeader(w http.ResponseWriter, q *request) (any, error) {
	var out structs.StatusResponse
	if err := q.rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &out); err != nil {
		return nil, err
	}
	return out.Leader, nil
}

func (a *API) statusPeers(w http.ResponseWriter, q *request) (any, error) {
	var out structs.StatusResponse
	if err := q.rpc.RPC("Status.Peers", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &out); err != nil {
		return nil, err
	}
	if out.Peers == nil {
		out.Peers = []string{}
	}
	return out.Peers, nil
}

// agentSelfResponse is the body of GET /v1/agent/self.
type agentSelfResponse struct {
	Config AgentInfo
	Stats  map[string]map[string]string
}

func (a *API) agentSelf(w http.ResponseWriter, q *request) (any, error) {
	out := agentSelfResponse{
		Config: a.cfg.Agent,
		Stats: map[string]map[string]string{
			"gossip": {"members": strconv.Itoa(a.cfg.Gossip.NumMembers())},
		},
	}
	if a.cfg.RaftStats != nil {
		out.Stats["raft"] = a.cfg.RaftStats()
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

func (a *API) agentMembers(w http.ResponseWriter, q *request) (any, error) {
	var leader structs.StatusResponse
	// Members are served even when no leader is known: that is when an
	// operator most needs them.
	_ = q.rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &leader)
	members := []memberJSON{}
	for _, m := range a.cfg.Gossip.Members() {
		members = append(members, memberJSON{
			Name: m.Name, Addr: m.Addr.String(), Port: m.Port, Status: string(m.Status),
			Role: string(m.Meta.Role), Region: m.Meta.Region, AZ: m.Meta.AZ, RPCAddr: m.Meta.RPCAddr,
			ID: m.Meta.ID, HTTPAddr: m.Meta.HTTPAddr, Version: m.Meta.Version,
			Leader: m.Meta.Role == "server" && m.Meta.RPCAddr != "" && m.Meta.RPCAddr == leader.Leader,
		})
	}
	return map[string]any{"ServerName": a.cfg.Agent.NodeName, "ServerRegion": a.cfg.Agent.Region, "Members": members}, nil
}

func (a *API) raftConfiguration(w http.ResponseWriter, q *request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.RaftConfigurationResponse
	if err := q.rpc.RPC("Operator.RaftGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	if out.Servers == nil {
		out.Servers = []*structs.RaftServer{}
	}
	return out, nil
}

func (a *API) raftRemovePeer(w http.ResponseWriter, q *request) (any, error) {
	v := q.URL.Query()
	args := structs.RaftPeerRequest{ID: v.Get("id"), Address: v.Get("address")}
	var out structs.GenericResponse
	return nil, q.rpc.RPC("Operator.RaftRemovePeer", &args, &out)
}

func (a *API) snapshotSave(w http.ResponseWriter, q *request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SnapshotResponse
	if err := q.rpc.RPC("Operator.SnapshotSave", &args, &out); err != nil {
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

func (a *API) snapshotRestore(w http.ResponseWriter, q *request) (any, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, q.Body, maxSnapshotBody))
	if err != nil {
		return nil, fmt.Errorf("read snapshot upload: %w", err)
	}
	if len(data) == 0 {
		return nil, structs.Errorf(structs.KindInvalid, "snapshot body is empty")
	}
	args := structs.SnapshotRestoreRequest{Data: data}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Operator.SnapshotRestore", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
