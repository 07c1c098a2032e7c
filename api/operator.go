package api

import (
	"io"
	"net/http"
	"net/url"
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
