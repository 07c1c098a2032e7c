package api

// Status reads the cluster's Raft leadership.
type Status struct{ c *Client }

// Status returns a handle on the /v1/status endpoints.
func (c *Client) Status() *Status { return &Status{c} }

// Leader returns the RPC address ("ip:port") of the Raft leader, or "" when
// no leader is known.
func (s *Status) Leader() (string, error) {
	var leader string
	_, err := s.c.query("/v1/status/leader", &leader, nil)
	return leader, err
}

// Peers returns the RPC addresses ("ip:port") of the Raft peers.
func (s *Status) Peers() ([]string, error) {
	var peers []string
	_, err := s.c.query("/v1/status/peers", &peers, nil)
	return peers, err
}
