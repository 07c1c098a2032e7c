package server

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// testPKI is a tlsutil CA that writes role certificates as files.
type testPKI struct {
	dir    string
	caFile string
	ca     *tlsutil.CA
	seq    int
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &testPKI{dir: dir, caFile: filepath.Join(dir, "ca.pem"), ca: ca}
	if err := os.WriteFile(p.caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tweak configures a server for mutual TLS with verify_incoming and
// verify_server_hostname, holding a fresh certificate of role.
func (p *testPKI) tweak(t *testing.T, role tlsutil.Role) func(*Config) {
	t.Helper()
	certPEM, keyPEM, err := p.ca.IssueRole(tlsutil.CertOptions{Role: role})
	if err != nil {
		t.Fatal(err)
	}
	p.seq++
	certFile := filepath.Join(p.dir, fmt.Sprintf("%s-%d.pem", role, p.seq))
	keyFile := filepath.Join(p.dir, fmt.Sprintf("%s-%d-key.pem", role, p.seq))
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &rpc.TLSConfig{CAFile: p.caFile, CertFile: certFile, KeyFile: keyFile, VerifyIncoming: true,
		VerifyServerHostname: true, ServerName: tlsutil.RoleName(tlsutil.RoleServer, "", "")}
	serverTLS, err := cfg.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	clientTLS, err := cfg.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) {
		c.TLSServer, c.TLSClient, c.RequireTLS = serverTLS, clientTLS, true
		c.RaftPeerName = cfg.RaftPeerName()
	}
}

// dialOnly is a raft.StreamLayer that dials through a server's Raft
// layer and accepts nothing, for probing another server's Raft.
type dialOnly struct {
	layer   *rpc.RaftLayer
	closeCh chan struct{}
}

func (d *dialOnly) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return d.layer.Dial(addr, timeout)
}
func (d *dialOnly) Accept() (net.Conn, error) { <-d.closeCh; return nil, errors.New("closed") }
func (d *dialOnly) Close() error              { return nil }
func (d *dialOnly) Addr() net.Addr            { return d.layer.Addr() }

// raftProbe sends one Raft RequestVote from s to addr through s's TLS
// settings; nil means the other side accepted the connection and
// answered as a Raft peer.
func raftProbe(t *testing.T, s *Server, addr string) error {
	t.Helper()
	closeCh := make(chan struct{})
	trans := raft.NewNetworkTransport(&dialOnly{layer: s.rpcServer.RaftLayer(), closeCh: closeCh}, 1, 30*time.Second, io.Discard)
	t.Cleanup(func() { close(closeCh); _ = trans.Close() })
	var resp raft.RequestVoteResponse
	return trans.RequestVote(raft.ServerID("probe"), raft.ServerAddress(addr), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("probe"), Addr: []byte(s.RPCAddr())},
		Term:      0,
	}, &resp)
}

func TestTLSClusterRefusesPeersWithoutAServerCertificate(t *testing.T) {
	pki := newTestPKI(t)
	servers := testCluster(t, 3, pki.tweak(t, tlsutil.RoleServer))
	leader := waitForLeader(t, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}
	// Forwarding and replication run over mutual TLS.
	upsertFlavor(t, follower, "tls-1")

	// Two servers try to join: one holds a server certificate of another
	// CA, the other a *client* certificate of the cluster's own CA.
	other := newTestPKI(t)
	join := []string{servers[0].Gossip().Addr()}
	foreign := testServer(t, func(c *Config) {
		other.tweak(t, tlsutil.RoleServer)(c)
		c.BootstrapExpect, c.Join = 0, join
	})
	clientCert := testServer(t, func(c *Config) {
		pki.tweak(t, tlsutil.RoleClient)(c)
		c.BootstrapExpect, c.Join = 0, join
	})
	// Gossip (not TLS) lets them in, so the leader adds them to Raft...
	waitFor(t, "the leader to add both to raft", 60*time.Second, func() error {
		f := leader.raft.GetConfiguration()
		if err := f.Error(); err != nil {
			return err
		}
		if n := len(f.Configuration().Servers); n != 5 {
			return fmt.Errorf("%d raft servers", n)
		}
		return nil
	})
	// ...but neither can talk Raft with the cluster in either direction,
	// while a real server can.
	if err := raftProbe(t, follower, leader.RPCAddr()); err != nil {
		t.Fatalf("a server's raft probe of the leader failed: %v", err)
	}
	for _, imp := range []*Server{foreign, clientCert} {
		if err := raftProbe(t, imp, leader.RPCAddr()); err == nil {
			t.Errorf("%s (%s) talked raft to the leader", imp.config.NodeName, map[*Server]string{foreign: "other CA", clientCert: "client certificate"}[imp])
		}
		if err := raftProbe(t, leader, imp.RPCAddr()); err == nil {
			t.Errorf("the leader talked raft to %s", imp.config.NodeName)
		}
	}
	// The three real servers still commit (3 of 5 is a quorum, though a
	// slow heartbeat under load can cost the leader its lease, hence the
	// retries) and replicate among themselves, while the impostors
	// receive nothing.
	waitFor(t, "a write after the impostors joined", 120*time.Second, func() error {
		var resp structs.FlavorUpsertResponse
		return follower.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{
			{ID: "tls-2", Name: "f-tls-2", VCPUs: 1, MemoryMB: 128, RootGB: 1, IsPublic: true},
		}}, &resp)
	})
	for _, s := range servers {
		waitFor(t, "replication to "+s.config.NodeName, 60*time.Second, func() error {
			if f, _ := s.fsm.State().FlavorByID(nil, "tls-2"); f == nil {
				return errors.New("flavor tls-2 missing")
			}
			return nil
		})
	}
	for _, imp := range []*Server{foreign, clientCert} {
		if fl, _ := imp.fsm.State().Flavors(nil); len(fl) != 0 {
			t.Errorf("%s received %d flavors through raft", imp.config.NodeName, len(fl))
		}
	}
}

func TestClusterCAIsSharedByEveryServer(t *testing.T) {
	servers := testCluster(t, 3, nil)
	var roots [][]byte
	for _, s := range servers {
		var out structs.CARootResponse
		if err := s.RPC("CA.Root", &structs.CARootRequest{}, &out); err != nil {
			t.Fatalf("CA.Root via %s: %v", s.config.NodeName, err)
		}
		roots = append(roots, out.CertPEM)
	}
	for i := range roots {
		if len(roots[i]) == 0 || string(roots[i]) != string(roots[0]) {
			t.Fatalf("servers disagree on the root:\n%s\n%s", roots[0], roots[i])
		}
	}
	root, err := tlsutil.ParseCertificate(roots[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(root)
	// The CA is in every server's replicated state.
	for _, s := range servers {
		waitFor(t, "the CA on "+s.config.NodeName, 60*time.Second, func() error {
			if ca, _ := s.fsm.State().ClusterCA(nil); ca == nil || string(ca.CertPEM) != string(roots[0]) {
				return errors.New("no cluster CA yet")
			}
			return nil
		})
	}
	var issued structs.CAIssueUserResponse
	if err := servers[2].RPC("CA.IssueUser", &structs.CAIssueUserRequest{ProjectID: "p1", UserID: "u1"}, &issued); err != nil {
		t.Fatal(err)
	}
	cert, err := tlsutil.ParseCertificate(issued.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("user certificate does not chain to the root: %v", err)
	}
	if cert.Subject.CommonName != "u1" {
		t.Errorf("subject %v", cert.Subject)
	}
	if err := servers[0].RPC("CA.IssueUser", &structs.CAIssueUserRequest{}, &issued); err == nil {
		t.Error("IssueUser without a user succeeded")
	}

	// A configured CA wins over the cluster's.
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, func(c *Config) { c.CA = ca })
	var out structs.CARootResponse
	if err := s.RPC("CA.Root", &structs.CARootRequest{}, &out); err != nil || string(out.CertPEM) != string(certPEM) {
		t.Fatalf("configured CA root: %v", err)
	}
}
