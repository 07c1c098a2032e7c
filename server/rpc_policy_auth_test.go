package server

import (
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// aclServer is a one-server cluster enforcing the RPC rules, with the
// dev identity (admin/admin on project admin, demo/demo a member of
// project demo) and a signing key.
func aclServer(t *testing.T) *Server {
	t.Helper()
	// Hosts registered here send no heartbeats: keep them up however
	// slow the logins are under load.
	s := testServer(t, func(c *Config) { c.ACLEnabled = true; c.HeartbeatTTL = time.Hour })
	waitForLeader(t, s)
	waitFor(t, "a signing key", 2*time.Minute, func() error {
		if s.serverCredential() == "" {
			return fmt.Errorf("no signing key yet")
		}
		return nil
	})
	// In process as the server itself: its own credential passes.
	if err := s.SeedDevIdentity(); err != nil {
		t.Fatalf("seed identity: %v", err)
	}
	seedFlavors(t, s)
	return s
}

// placed waits until an instance is on a host (or failed) and returns it.
func placed(t *testing.T, s *Server, id string) *structs.Instance {
	t.Helper()
	var inst *structs.Instance
	waitFor(t, "instance "+id+" placed", 2*time.Minute, func() error {
		var err error
		inst, err = s.fsm.State().InstanceByID(nil, id)
		if err != nil || inst == nil || inst.HostID == "" && inst.VMState == structs.VMStateBuilding {
			return fmt.Errorf("instance %s still scheduling (%v)", id, err)
		}
		return nil
	})
	return inst
}

// remote calls a server over TCP, as anyone reaching its RPC port does.
type remote struct {
	t    *testing.T
	pool *rpc.ConnPool
	addr string
}

func newRemote(t *testing.T, s *Server) *remote {
	pool := rpc.NewConnPool(rpc.PoolConfig{})
	t.Cleanup(func() { _ = pool.Shutdown() })
	return &remote{t: t, pool: pool, addr: s.RPCAddr()}
}

func (r *remote) call(method string, args, reply any) error {
	return r.pool.RPC(r.addr, method, args, reply)
}

// token logs in over TCP (Identity.IssueToken is public).
func (r *remote) token(user, project string) *structs.TokenIssueResponse {
	r.t.Helper()
	var out structs.TokenIssueResponse
	err := r.call("Identity.IssueToken", &structs.TokenIssueRequest{Method: "password", UserName: user,
		UserDomainName: "Default", Password: user, ProjectName: project, ProjectDomainID: "default"}, &out)
	if err != nil {
		r.t.Fatalf("log in as %s: %v", user, err)
	}
	return &out
}

// guardedCalls are the calls nobody but an admin (or the right node)
// may make, each with the credential given.
func guardedCalls(cred string) map[string]func(r *remote) error {
	w := structs.WriteRequest{AuthToken: cred}
	q := structs.QueryOptions{AuthToken: cred}
	return map[string]func(r *remote) error{
		"Instance.Create (project admin)": func(r *remote) error {
			return r.call("Instance.Create", &structs.InstanceCreateRequest{Name: "x", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1,
				ProjectID: "admin", WriteRequest: w}, &structs.InstanceCreateResponse{})
		},
		"Flavor.Upsert": func(r *remote) error {
			return r.call("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{
				{ID: "evil", Name: "evil", VCPUs: 1, MemoryMB: 64, RootGB: 1, IsPublic: true}}, WriteRequest: w},
				&structs.FlavorUpsertResponse{})
		},
		"Identity.Upsert (new user)": func(r *remote) error {
			return r.call("Identity.Upsert", &structs.IdentityUpsertRequest{
				Users:     []*structs.User{{ID: "mallory", Name: "mallory", DomainID: structs.DefaultDomainID, Enabled: true}},
				Passwords: map[string]string{"mallory": "pw"}, WriteRequest: w}, &structs.IdentityUpsertResponse{})
		},
		"Host.List (whole records)": func(r *remote) error {
			var out structs.HostListResponse
			if err := r.call("Host.List", &structs.HostListRequest{QueryOptions: q}, &out); err != nil {
				return err
			}
			for _, h := range out.Hosts {
				if h.ID == "h2" && len(h.Inventories) == 0 {
					// A node secret reads another host's directory entry only.
					return structs.Errorf(structs.KindPermission, "directory entry only")
				}
			}
			return nil
		},
		"Alloc.GetHostAllocs (h2)": func(r *remote) error {
			return r.call("Alloc.GetHostAllocs", &structs.AllocHostRequest{HostID: "h2", QueryOptions: q}, &structs.AllocIndexResponse{})
		},
	}
}

func TestRPCRulesRefuseWhoTheyMust(t *testing.T) {
	t.Parallel()
	s := aclServer(t)
	r := newRemote(t, s)
	if err := registerWithSecret(s, testHost("h1", 8, 16384), secretA); err != nil {
		t.Fatal(err)
	}
	if err := registerWithSecret(s, testHost("h2", 8, 16384), secretB); err != nil {
		t.Fatal(err)
	}
	admin := r.token("admin", "admin")
	demo := r.token("demo", "demo")

	// A token signed by a key the cluster does not know.
	_, priv, _ := authtoken.GenerateKey()
	now := time.Now()
	forgedTok, err := authtoken.Sign("k-forged", priv, &structs.TokenClaims{UserID: admin.Claims.UserID,
		ProjectID: admin.Claims.ProjectID, Roles: []string{"admin"}, Methods: []string{"password"},
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), AuditID: authtoken.NewAuditID()})
	if err != nil {
		t.Fatal(err)
	}
	// An admin token of the cluster's own key that has expired.
	keys, _ := s.fsm.State().SigningKeys(nil)
	key := newestSigningKey(keys)
	expiredTok, err := authtoken.Sign(key.ID, ed25519.PrivateKey(key.Secret), &structs.TokenClaims{UserID: admin.Claims.UserID,
		ProjectID: admin.Claims.ProjectID, Roles: []string{"admin"}, Methods: []string{"password"},
		IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour), AuditID: authtoken.NewAuditID()})
	if err != nil {
		t.Fatal(err)
	}
	// An admin token revoked by its admin.
	revoked := r.token("admin", "admin")
	if err := r.call("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: revoked.Claims.AuditID,
		ExpiresAt: revoked.Claims.ExpiresAt, WriteRequest: structs.WriteRequest{AuthToken: admin.Token}}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("revoke: %v", err)
	}

	for _, c := range []struct {
		who, cred string
		want      structs.ErrorKind
	}{
		{"no credential", "", structs.KindUnauthenticated},
		{"a forged token", forgedTok, structs.KindUnauthenticated},
		{"an expired token", expiredTok, structs.KindUnauthenticated},
		{"a revoked token", revoked.Token, structs.KindUnauthenticated},
		{"garbage", "not-a-token", structs.KindUnauthenticated},
		{"a node secret", secretA, structs.KindPermission},
		{"a secret of no host", forged, structs.KindUnauthenticated},
		{"a member of project demo", demo.Token, structs.KindPermission},
	} {
		for name, call := range guardedCalls(c.cred) {
			err := call(r)
			want := c.want
			if name == "Alloc.GetHostAllocs (h2)" && c.cred == forged {
				// The endpoint answers node secrets itself: permission.
				want = structs.KindPermission
			}
			if got := structs.KindOf(err); got != want {
				t.Errorf("%s with %s: got %v (%v), want %s", name, c.who, got, err, want)
			}
		}
	}
	for name, call := range guardedCalls(admin.Token) {
		if name == "Alloc.GetHostAllocs (h2)" {
			continue // a node call: no user token reaches it
		}
		if err := call(r); err != nil {
			t.Errorf("%s with an admin token: %v", name, err)
		}
	}
	// Forwarded is the caller's word, never trusted.
	err = r.call("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{ID: "f2", Name: "f2", VCPUs: 1,
		MemoryMB: 64, RootGB: 1}}, WriteRequest: structs.WriteRequest{Forwarded: true}}, &structs.FlavorUpsertResponse{})
	if structs.KindOf(err) != structs.KindUnauthenticated {
		t.Errorf("a call claiming to be forwarded: %v", err)
	}
}

func TestRPCRulesConfineMembersAndNodes(t *testing.T) {
	t.Parallel()
	s := aclServer(t)
	r := newRemote(t, s)
	if err := registerWithSecret(s, testHost("h1", 8, 16384), secretA); err != nil {
		t.Fatal(err)
	}
	admin := r.token("admin", "admin")
	demo := r.token("demo", "demo")
	w := func(tok string) structs.WriteRequest { return structs.WriteRequest{AuthToken: tok} }
	q := func(tok string) structs.QueryOptions { return structs.QueryOptions{AuthToken: tok} }

	// A member boots into its own project, whatever it leaves empty; the
	// servers place it with their own credential.
	var mine structs.InstanceCreateResponse
	if err := r.call("Instance.Create", &structs.InstanceCreateRequest{Name: "mine", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1,
		WriteRequest: w(demo.Token)}, &mine); err != nil {
		t.Fatalf("member boot: %v", err)
	}
	inst := placed(t, s, mine.Instances[0].ID)
	if inst.ProjectID != demo.Claims.ProjectID || inst.UserID != demo.Claims.UserID || inst.HostID != "h1" {
		t.Fatalf("member's instance: project %q user %q host %q", inst.ProjectID, inst.UserID, inst.HostID)
	}
	var theirs structs.InstanceCreateResponse
	if err := r.call("Instance.Create", &structs.InstanceCreateRequest{Name: "theirs", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1,
		WriteRequest: w(admin.Token)}, &theirs); err != nil {
		t.Fatalf("admin boot: %v", err)
	}
	placed(t, s, theirs.Instances[0].ID)
	other := theirs.Instances[0].ID

	// Another project's instance does not exist for a member.
	err := r.call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: other, QueryOptions: q(demo.Token)}, &structs.SingleInstanceResponse{})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("member reads another project's instance: %v", err)
	}
	err = r.call("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{other}, WriteRequest: w(demo.Token)}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("member deletes another project's instance: %v", err)
	}
	err = r.call("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}, Admin: true, WriteRequest: w(demo.Token)}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("member claims admin: %v", err)
	}
	var list structs.InstanceListResponse
	if err := r.call("Instance.List", &structs.InstanceListRequest{QueryOptions: q(demo.Token)}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Instances) != 1 || list.Instances[0].ID != inst.ID {
		t.Errorf("member's list: %d instances", len(list.Instances))
	}
	err = r.call("Instance.List", &structs.InstanceListRequest{ProjectID: admin.Claims.ProjectID, QueryOptions: q(demo.Token)}, &list)
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("member lists another project: %v", err)
	}

	// The node secret of h1 reads what h1 runs, not the rest.
	var got structs.SingleInstanceResponse
	if err := r.call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: inst.ID, QueryOptions: q(secretA)}, &got); err != nil || got.Instance == nil {
		t.Errorf("node reads an instance on its host: %v", err)
	}
	if err := r.call("Image.List", &structs.ImageListRequest{QueryOptions: q(secretA)}, &structs.ImageListResponse{}); err != nil {
		t.Errorf("node lists images: %v", err)
	}
	err = r.call("Instance.Create", &structs.InstanceCreateRequest{Name: "n", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1, WriteRequest: w(secretA)}, &structs.InstanceCreateResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("node boots: %v", err)
	}
	err = r.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, HostID: "h9", QueryOptions: q(secretA)}, &structs.NetListResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("node lists another host's ports: %v", err)
	}

	// The member deletes its own instance.
	if err := r.call("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}, WriteRequest: w(demo.Token)}, &structs.GenericResponse{}); err != nil {
		t.Errorf("member deletes its instance: %v", err)
	}
}

func TestRPCRulesLetUsersManageThemselves(t *testing.T) {
	t.Parallel()
	s := aclServer(t)
	r := newRemote(t, s)
	demo := r.token("demo", "demo")
	w := structs.WriteRequest{AuthToken: demo.Token}
	var users structs.IdentityListResponse
	if err := r.call("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, ID: demo.Claims.UserID,
		QueryOptions: structs.QueryOptions{AuthToken: demo.Token}}, &users); err != nil || len(users.Users) != 1 {
		t.Fatalf("read itself: %v", err)
	}
	err := r.call("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindUsers,
		QueryOptions: structs.QueryOptions{AuthToken: demo.Token}}, &structs.IdentityListResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("member lists users: %v", err)
	}
	self := users.Users[0]
	renamed := *self
	renamed.Name = "root"
	err = r.call("Identity.Upsert", &structs.IdentityUpsertRequest{Users: []*structs.User{&renamed},
		Passwords: map[string]string{self.ID: "x"}, WriteRequest: w}, &structs.IdentityUpsertResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("rename itself: %v", err)
	}
	// A member revokes its own tokens but not an admin's.
	admin := r.token("admin", "admin")
	err = r.call("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: admin.Claims.AuditID, ExpiresAt: admin.Claims.ExpiresAt,
		Token: admin.Token, WriteRequest: w}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("member revokes an admin's token: %v", err)
	}
	other := r.token("demo", "demo")
	if err := r.call("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: other.Claims.AuditID, ExpiresAt: other.Claims.ExpiresAt,
		Token: other.Token, WriteRequest: w}, &structs.GenericResponse{}); err != nil {
		t.Errorf("revoke another of its tokens: %v", err)
	}
	// Its own password, its own record unchanged (which revokes its
	// tokens).
	if err := r.call("Identity.Upsert", &structs.IdentityUpsertRequest{Users: []*structs.User{self},
		Passwords: map[string]string{self.ID: "new-pw"}, WriteRequest: w}, &structs.IdentityUpsertResponse{}); err != nil {
		t.Errorf("change own password: %v", err)
	}
}

// TestRPCRulesHoldAfterForwarding checks a follower and the leader both
// apply the rules: a member's write goes through a follower to the
// leader; a call without credential is refused wherever it lands.
func TestRPCRulesHoldAfterForwarding(t *testing.T) {
	t.Parallel()
	servers := testCluster(t, 3, func(c *Config) { c.ACLEnabled = true; c.NumSchedulers = -1 })
	leader := waitForLeader(t, servers...)
	waitFor(t, "a signing key everywhere", 2*time.Minute, func() error {
		for _, s := range servers {
			if s.serverCredential() == "" {
				return fmt.Errorf("%s has no signing key yet", s.config.NodeName)
			}
		}
		return nil
	})
	// Leadership may move under load: seed through whoever leads now.
	waitFor(t, "the dev identity and flavors", 2*time.Minute, func() error {
		for _, s := range servers {
			if !s.IsLeader() {
				continue
			}
			if err := s.SeedDevIdentity(); err != nil {
				return err
			}
			return s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{})
		}
		return fmt.Errorf("no leader")
	})
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}
	r := newRemote(t, follower)
	demo := r.token("demo", "demo")
	var created structs.InstanceCreateResponse
	if err := r.call("Instance.Create", &structs.InstanceCreateRequest{Name: "via-follower", FlavorID: "m1.tiny", ImageID: "cirros", Count: 1,
		WriteRequest: structs.WriteRequest{AuthToken: demo.Token}}, &created); err != nil {
		t.Fatalf("member's boot through a follower: %v", err)
	}
	waitFor(t, "the member's instance replicated", 2*time.Minute, func() error {
		inst, err := follower.fsm.State().InstanceByID(nil, created.Instances[0].ID)
		if err != nil || inst == nil || inst.ProjectID != demo.Claims.ProjectID {
			return fmt.Errorf("instance %+v (%v)", inst, err)
		}
		return nil
	})
	err := r.call("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{ID: "f", Name: "f", VCPUs: 1,
		MemoryMB: 64, RootGB: 1}}, WriteRequest: structs.WriteRequest{Forwarded: true}}, &structs.FlavorUpsertResponse{})
	if structs.KindOf(err) != structs.KindUnauthenticated {
		t.Errorf("uncredentialed write through a follower: %v", err)
	}
	// The follower's own credential carries a forwarded internal call.
	if err := follower.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{ID: "f", Name: "f", VCPUs: 1,
		MemoryMB: 64, RootGB: 1, IsPublic: true}}}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Errorf("a follower's own write: %v", err)
	}
}

// BenchmarkAuthorizeRPC measures the hook on a token, which is verified
// once and then served from the cache.
func BenchmarkAuthorizeRPC(b *testing.B) {
	s := testServer(b, func(c *Config) { c.ACLEnabled = true; c.NumSchedulers = -1 })
	waitForLeader(b, s)
	waitFor(b, "a signing key", 60*time.Second, func() error {
		if s.serverCredential() == "" {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	args := &structs.FlavorListRequest{QueryOptions: structs.QueryOptions{AuthToken: s.serverCredential()}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.authorizeRPC("Flavor.List", args); err != nil {
			b.Fatal(err)
		}
	}
}
