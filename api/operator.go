package api

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Operator holds cluster-maintenance endpoints: Raft membership and
// snapshots.
type Operator struct{ c *Client }

// Operator returns a handle on the /v1/operator endpoints.
func (c *Client) Operator() *Operator { return &Operator{c} }

// RaftConfiguration is the Raft cluster's membership.
type RaftConfiguration struct {
	Servers []*RaftServer
	// Index is the Raft index of the configuration.
	Index uint64
}

// RaftServer is one Raft peer.
type RaftServer struct {
	ID      string
	Node    string
	Address string
	Leader  bool
	Voter   bool
}

// RaftGetConfiguration returns the Raft cluster's membership.
func (o *Operator) RaftGetConfiguration(q *QueryOptions) (*RaftConfiguration, error) {
	var out RaftConfiguration
	if _, err := o.c.query("/v1/operator/raft/configuration", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// RaftRemovePeerByAddress removes the Raft peer with the given RPC address
// ("ip:port").
func (o *Operator) RaftRemovePeerByAddress(addr string) error {
	_, err := o.c.delete("/v1/operator/raft/peer", url.Values{"address": {addr}})
	return err
}

// RaftRemovePeerByID removes the Raft peer with the given server ID.
func (o *Operator) RaftRemovePeerByID(id string) error {
	_, err := o.c.delete("/v1/operator/raft/peer", url.Values{"id": {id}})
	return err
}

// SnapshotSave streams a snapshot of the cluster state. The caller must
// close the returned reader; the snapshot is not buffered in memory.
func (o *Operator) SnapshotSave(q *QueryOptions) (io.ReadCloser, error) {
	resp, err := o.c.do(&request{method: http.MethodGet, path: "/v1/operator/snapshot", query: q})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// SnapshotRestore replaces the cluster state with the snapshot read from r,
// streaming it to the server. It does not close r.
func (o *Operator) SnapshotRestore(r io.Reader) error {
	resp, err := o.c.do(&request{method: http.MethodPut, path: "/v1/operator/snapshot",
		body: io.NopCloser(r), contentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// SchedulerConfiguration is the scheduler's tunables, named after Nova's
// [filter_scheduler] options.
type SchedulerConfiguration struct {
	RAMWeightMultiplier              float64
	CPUWeightMultiplier              float64
	DiskWeightMultiplier             float64
	BuildFailureWeightMultiplier     float64
	SoftAffinityWeightMultiplier     float64
	SoftAntiAffinityWeightMultiplier float64
	HostSubsetSize                   int
	// CreateIndex and ModifyIndex are 0 while no operator has set it.
	CreateIndex uint64 `json:",omitempty"`
	ModifyIndex uint64 `json:",omitempty"`
}

// SchedulerConfigurationResponse is the configuration in force and where
// it comes from: "operator" (replicated, set with SchedulerSetConfiguration)
// or "config" (the answering server's configuration file).
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	Source          string
}

// SchedulerSetConfigurationResponse says whether a set took effect.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	Index   uint64
}

// SchedulerGetConfiguration returns the scheduler configuration in force.
func (o *Operator) SchedulerGetConfiguration(q *QueryOptions) (*SchedulerConfigurationResponse, *QueryMeta, error) {
	var out SchedulerConfigurationResponse
	qm, err := o.c.query("/v1/operator/scheduler/configuration", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// SchedulerSetConfiguration sets the scheduler configuration of every
// server.
func (o *Operator) SchedulerSetConfiguration(c *SchedulerConfiguration) (*SchedulerSetConfigurationResponse, error) {
	var out SchedulerSetConfigurationResponse
	if _, err := o.c.write(http.MethodPut, "/v1/operator/scheduler/configuration", nil, c.tunables(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SchedulerCASConfiguration sets the scheduler configuration only if it
// is still at index (its ModifyIndex when read; 0 when never set).
func (o *Operator) SchedulerCASConfiguration(c *SchedulerConfiguration, index uint64) (*SchedulerSetConfigurationResponse, error) {
	var out SchedulerSetConfigurationResponse
	params := url.Values{"cas": {strconv.FormatUint(index, 10)}}
	if _, err := o.c.write(http.MethodPut, "/v1/operator/scheduler/configuration", params, c.tunables(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// tunables is c without its indexes, which are the server's to set.
func (c *SchedulerConfiguration) tunables() *SchedulerConfiguration {
	out := *c
	out.CreateIndex, out.ModifyIndex = 0, 0
	return &out
}

// Bootstrap is the cluster's first administrator, as created by
// Operator.Bootstrap. Its password is shown only once.
type Bootstrap struct {
	UserID      string
	UserName    string
	Password    string
	ProjectID   string
	ProjectName string
	DomainID    string
}

// Bootstrap creates the first administrator of a cluster without users;
// it needs no token and works exactly once.
func (o *Operator) Bootstrap() (*Bootstrap, error) {
	var out Bootstrap
	if _, err := o.c.write(http.MethodPost, "/v1/operator/bootstrap", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
