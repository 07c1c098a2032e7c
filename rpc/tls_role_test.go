package rpc

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// roleCA is a tlsutil CA whose role certificates are written as files.
type roleCA struct {
	dir    string
	caFile string
	ca     *tlsutil.CA
}

func newRoleCA(t *testing.T) *roleCA {
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
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &roleCA{dir: dir, caFile: caFile, ca: ca}
}

// tlsConfig issues a certificate for role and returns an agent's TLS
// config with verify_server_hostname on.
func (r *roleCA) tlsConfig(t *testing.T, role tlsutil.Role) *TLSConfig {
	t.Helper()
	certPEM, keyPEM, err := r.ca.IssueRole(tlsutil.CertOptions{Role: role})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(r.dir, string(role)+"-*.pem")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	keyFile := f.Name() + "-key"
	if err := os.WriteFile(f.Name(), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &TLSConfig{CAFile: r.caFile, CertFile: f.Name(), KeyFile: keyFile, VerifyServerHostname: true,
		ServerName: tlsutil.RoleName(tlsutil.RoleServer, "", "")}
}

func TestRaftRequiresServerCertificate(t *testing.T) {
	for _, verifyIncoming := range []bool{false, true} {
		ca := newRoleCA(t)
		serverCfg := ca.tlsConfig(t, tlsutil.RoleServer)
		serverCfg.VerifyIncoming = verifyIncoming
		srv := startServer(t, "", ServerConfig{TLS: mustServerTLS(t, serverCfg), RequireTLS: true,
			RaftPeerName: serverCfg.RaftPeerName()})
		addr := raft.ServerAddress(srv.Addr().String())

		// Another server's certificate joins Raft.
		peer := newRaftLayer(srv.Addr())
		peer.setClientTLS(mustClientTLS(t, serverCfg))
		accepted := acceptOne(srv.RaftLayer())
		conn, err := peer.Dial(addr, 5*time.Second)
		if err != nil {
			t.Fatalf("verify_incoming=%v: server dial: %v", verifyIncoming, err)
		}
		t.Cleanup(func() { conn.Close() })
		raftEcho(t, conn, accepted)

		// A client certificate of the same CA is refused, and so is a
		// connection with no certificate (when the server lets it in).
		clientCfg := ca.tlsConfig(t, tlsutil.RoleClient)
		impostor := newRaftLayer(srv.Addr())
		impostor.setClientTLS(mustClientTLS(t, clientCfg))
		conn, err = impostor.Dial(addr, 5*time.Second)
		if err != nil {
			t.Fatalf("verify_incoming=%v: client-cert dial: %v", verifyIncoming, err)
		}
		t.Cleanup(func() { conn.Close() })
		expectClosedByServer(t, conn)

		if !verifyIncoming {
			anon := newRaftLayer(srv.Addr())
			anon.setClientTLS(mustClientTLS(t, &TLSConfig{CAFile: ca.caFile, VerifyServerHostname: true,
				ServerName: serverCfg.ServerName}))
			conn, err = anon.Dial(addr, 5*time.Second)
			if err != nil {
				t.Fatalf("anonymous dial: %v", err)
			}
			t.Cleanup(func() { conn.Close() })
			expectClosedByServer(t, conn)
		}

		// RPC with the client certificate still works: clients call
		// servers.
		pool := newPool(t, PoolConfig{TLS: mustClientTLS(t, clientCfg), DialTimeout: 5 * time.Second})
		var reply EchoReply
		if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "hi"}, &reply); err != nil || reply.Msg != "hi" {
			t.Fatalf("verify_incoming=%v: client RPC: %v %+v", verifyIncoming, err, reply)
		}
	}
}

func TestClientCertificateCannotServe(t *testing.T) {
	ca := newRoleCA(t)
	// A node holding a client certificate poses as a server.
	fakeCfg := ca.tlsConfig(t, tlsutil.RoleClient)
	fake := startServer(t, "", ServerConfig{TLS: mustServerTLS(t, fakeCfg), RequireTLS: true})

	callerCfg := ca.tlsConfig(t, tlsutil.RoleClient)
	pool := newPool(t, PoolConfig{TLS: mustClientTLS(t, callerCfg), DialTimeout: 5 * time.Second})
	var reply EchoReply
	err := pool.RPC(fake.Addr().String(), "Test.Echo", &EchoArgs{Msg: "secret"}, &reply)
	if err == nil || !IsConnError(err) {
		t.Fatalf("RPC to a client-certificate server: err = %v, want a connection error", err)
	}

	// Nor can its Raft layer be dialed as a server's.
	layer := newRaftLayer(fake.Addr())
	layer.setClientTLS(mustClientTLS(t, callerCfg))
	if conn, err := layer.Dial(raft.ServerAddress(fake.Addr().String()), 5*time.Second); err == nil {
		conn.Close()
		t.Fatal("raft dial to a client-certificate server succeeded")
	}
}
