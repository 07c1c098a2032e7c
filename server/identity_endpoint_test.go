package server

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"golang.org/x/crypto/bcrypt"

	"github.com/stratus-cloud/stratus/structs"
)

// identityServer starts a leader with devstack's identity seeded.
func identityServer(t *testing.T) *Server {
	t.Helper()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	if err := s.SeedDevIdentity(); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return s
}

func authenticate(s *Server, req *structs.IdentityAuthRequest) (*structs.IdentityAuthResponse, error) {
	var resp structs.IdentityAuthResponse
	err := s.RPC("Identity.Authenticate", req, &resp)
	return &resp, err
}

func identityList(t *testing.T, s *Server, req *structs.IdentityListRequest) *structs.IdentityListResponse {
	t.Helper()
	var resp structs.IdentityListResponse
	if err := s.RPC("Identity.List", req, &resp); err != nil {
		t.Fatalf("list %s: %v", req.Kind, err)
	}
	return &resp
}

func TestIdentityAuthenticate(t *testing.T) {
	t.Parallel()
	s := identityServer(t)
	resp, err := authenticate(s, &structs.IdentityAuthRequest{Method: "password", UserName: "admin", UserDomainName: "Default",
		Password: "admin", ProjectName: "admin", ProjectDomainID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.User.Name != "admin" || resp.User.PasswordHash != nil || resp.Project.Name != "admin" ||
		len(resp.Roles) != 1 || resp.Roles[0].Name != "admin" {
		t.Fatalf("answer %+v %+v %+v", resp.User, resp.Project, resp.Roles)
	}
	// Unscoped: no project, no roles. By user id this time.
	resp, err = authenticate(s, &structs.IdentityAuthRequest{Method: "password", UserID: resp.User.ID, Password: "admin"})
	if err != nil || resp.Project != nil || len(resp.Roles) != 0 {
		t.Fatalf("unscoped %+v %v", resp, err)
	}
	// The token method, which trusted its caller with the user id, is
	// IssueToken's alone now.
	if _, err := authenticate(s, &structs.IdentityAuthRequest{Method: "token", UserID: resp.User.ID, ProjectName: "admin", ProjectDomainName: "Default"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("token method on Authenticate: %v", err)
	}

	var demo *structs.User
	for _, u := range identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: "demo"}).Users {
		demo = u
	}
	var disabled structs.IdentityUpsertResponse
	err = s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{
		Users:     []*structs.User{{Name: "off", Enabled: false}},
		Projects:  []*structs.Project{{Name: "closed", Enabled: false}},
		Passwords: map[string]string{"off": "secret"},
	}, &disabled)
	if err != nil {
		t.Fatal(err)
	}
	adminRole := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindRoles, Name: "admin"}).Roles[0]
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Assignments: []*structs.RoleAssignment{
		{UserID: demo.ID, ProjectID: disabled.Projects[0].ID, RoleID: adminRole.ID}}}, &structs.IdentityUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	bad := map[string]*structs.IdentityAuthRequest{
		"wrong password":   {Method: "password", UserName: "admin", UserDomainID: "default", Password: "nope"},
		"unknown user":     {Method: "password", UserName: "ghost", UserDomainID: "default", Password: "admin"},
		"unknown user id":  {Method: "password", UserID: "ghost", Password: "admin"},
		"other domain":     {Method: "password", UserName: "admin", UserDomainName: "Elsewhere", Password: "admin"},
		"disabled user":    {Method: "password", UserName: "off", UserDomainID: "default", Password: "secret"},
		"disabled project": {Method: "password", UserName: "demo", UserDomainID: "default", Password: "demo", ProjectName: "closed", ProjectDomainID: "default"},
		"no role":          {Method: "password", UserName: "demo", UserDomainID: "default", Password: "demo", ProjectName: "admin", ProjectDomainID: "default"},
		"unknown project":  {Method: "password", UserName: "demo", UserDomainID: "default", Password: "demo", ProjectID: "nowhere"},
	}
	for name, req := range bad {
		_, err := authenticate(s, req)
		if structs.KindOf(err) != structs.KindPermission || structs.Message(err) != structs.AuthFailedMessage {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := authenticate(s, &structs.IdentityAuthRequest{Method: "password", UserName: "admin", Password: "admin"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("name without a domain: %v", err)
	}
}

func TestIdentityUpsertHashesPasswords(t *testing.T) {
	t.Parallel()
	s := identityServer(t)
	const secret = "correct-horse-battery-staple"
	var resp structs.IdentityUpsertResponse
	err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{
		Users:     []*structs.User{{Name: "alice", Enabled: true, PasswordHash: []byte("ignored")}},
		Passwords: map[string]string{"alice": secret},
	}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Users[0]
	if len(u.ID) != 32 || u.DomainID != structs.DefaultDomainID || u.PasswordHash != nil {
		t.Fatalf("answered user %+v", u)
	}
	stored, _ := s.FSM().State().UserByID(nil, u.ID)
	if cost, err := bcrypt.Cost(stored.PasswordHash); err != nil || cost != bcryptCost {
		t.Fatalf("stored hash cost %d, %v", cost, err)
	}
	if bcrypt.CompareHashAndPassword(stored.PasswordHash, []byte(secret)) != nil {
		t.Fatal("stored hash does not match the password")
	}
	// The plaintext is nowhere: not in the Raft log, not in a snapshot.
	last, _ := s.raftStore.LastIndex()
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := s.raftStore.GetLog(i, &l); err == nil && bytes.Contains(l.Data, []byte(secret)) {
			t.Fatalf("raft log entry %d holds the plaintext password", i)
		}
	}
	var snap bytes.Buffer
	if err := s.FSM().State().WriteSnapshot(&snap); err != nil || bytes.Contains(snap.Bytes(), []byte(secret)) {
		t.Fatalf("snapshot holds the plaintext password (%v)", err)
	}
	// Answers never carry hashes.
	for _, u := range identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers}).Users {
		if u.PasswordHash != nil {
			t.Fatalf("list answered %s's hash", u.Name)
		}
	}
	// An update without a password keeps it.
	upd := *u
	upd.Email = "alice@example.com"
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Users: []*structs.User{&upd}}, &resp); err != nil {
		t.Fatal(err)
	}
	if _, err := authenticate(s, &structs.IdentityAuthRequest{Method: "password", UserID: u.ID, Password: secret}); err != nil {
		t.Fatalf("password lost by an update: %v", err)
	}
	// Requests that make no sense are refused before proposal.
	for name, req := range map[string]*structs.IdentityUpsertRequest{
		"empty":          {},
		"blank name":     {Roles: []*structs.Role{{Name: " "}}},
		"other domain":   {Projects: []*structs.Project{{Name: "x", DomainID: "elsewhere"}}},
		"twice":          {Roles: []*structs.Role{{Name: "x"}, {Name: "x"}}},
		"stray password": {Passwords: map[string]string{"nobody": "pw"}, Roles: []*structs.Role{{Name: "y"}}},
		"bad default":    {Users: []*structs.User{{Name: "bob", DefaultProjectID: "nowhere"}}},
	} {
		if err := s.RPC("Identity.Upsert", req, &resp); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Roles: []*structs.Role{{Name: "admin"}}}, &resp); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("duplicate role name: %v", err)
	}
}

func TestIdentitySigningKeyCreatedByLeader(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	waitFor(t, "a signing key", 10*time.Second, func() error {
		keys := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindSigningKeys}).SigningKeys
		if len(keys) != 1 {
			return fmt.Errorf("%d keys", len(keys))
		}
		if len(keys[0].Secret) != 0 || len(keys[0].PublicKey) != 32 || keys[0].ID == "" || keys[0].CreatedAt == 0 {
			return fmt.Errorf("key %+v", keys[0])
		}
		return nil
	})
	// Running the duty again changes nothing.
	if err := s.createSigningKeyIfNone(); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.FSM().State().SigningKeys(nil); len(keys) != 1 {
		t.Fatalf("%d keys after a second run", len(keys))
	}
}

func TestSeedDevIdentityIsIdempotent(t *testing.T) {
	t.Parallel()
	s := identityServer(t)
	count := func() [4]int {
		st := s.FSM().State()
		p, _ := st.Projects(nil)
		u, _ := st.Users(nil)
		r, _ := st.Roles(nil)
		a, _ := st.Assignments(nil, "", "", "")
		return [4]int{len(p), len(u), len(r), len(a)}
	}
	if got := count(); got != [4]int{2, 2, 3, 2} {
		t.Fatalf("seeded %v", got)
	}
	before := s.FSM().State().LatestIndex()
	var resp structs.GenericResponse
	if err := s.RPC("Identity.SeedDev", &structs.IdentitySeedRequest{}, &resp); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != [4]int{2, 2, 3, 2} {
		t.Fatalf("after a second seed %v", got)
	}
	if s.FSM().State().LatestIndex() != before {
		t.Fatal("a second seed wrote something")
	}
	if _, err := authenticate(s, &structs.IdentityAuthRequest{Method: "password", UserName: "demo", UserDomainName: "Default",
		Password: "demo", ProjectName: "demo", ProjectDomainName: "Default"}); err != nil {
		t.Fatal(err)
	}
}

func TestIdentityDeleteAndRevocations(t *testing.T) {
	t.Parallel()
	s := identityServer(t)
	demo := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: "demo"}).Users[0]
	// Projects by member; roles of a user on a project.
	projects := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, UserID: demo.ID}).Projects
	if len(projects) != 1 || projects[0].Name != "demo" {
		t.Fatalf("demo's projects %+v", projects)
	}
	roles := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindRoles, UserID: demo.ID, ProjectID: projects[0].ID}).Roles
	if len(roles) != 1 || roles[0].Name != "member" {
		t.Fatalf("demo's roles %+v", roles)
	}

	// A blocking read of revocations wakes on a revocation.
	rev := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindRevoked})
	woke := make(chan *structs.IdentityListResponse, 1)
	go func() {
		var resp structs.IdentityListResponse
		_ = s.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindRevoked,
			QueryOptions: structs.QueryOptions{MinQueryIndex: rev.Index, MaxQueryTime: 10 * time.Second}}, &resp)
		woke <- &resp
	}()
	exp := time.Now().Add(time.Hour)
	if err := s.RPC("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: "audit-1", ExpiresAt: exp}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-woke:
		if len(resp.Revoked) != 1 || resp.Revoked[0].AuditID != "audit-1" || resp.Revoked[0].ExpiresAt != exp.UnixNano() {
			t.Fatalf("revoked %+v", resp.Revoked)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("blocking list of revocations never woke")
	}

	// Deleting the user drops its assignments and revokes its tokens.
	if err := s.RPC("Identity.Delete", &structs.IdentityDeleteRequest{UserIDs: []string{demo.ID}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if as := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindAssignments, UserID: demo.ID}).Assignments; len(as) != 0 {
		t.Fatalf("deleted user keeps %d assignments", len(as))
	}
	var event *structs.RevokedToken
	for _, r := range identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindRevoked}).Revoked {
		if r.UserID == demo.ID {
			event = r
		}
	}
	if event == nil || !event.IsEvent() || event.IssuedBefore == 0 || event.ExpiresAt <= event.IssuedBefore {
		t.Fatalf("no revocation event for the deleted user: %+v", event)
	}
	if err := s.RPC("Identity.Delete", &structs.IdentityDeleteRequest{UserIDs: []string{demo.ID}}, &structs.GenericResponse{}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.RPC("Identity.List", &structs.IdentityListRequest{Kind: "tokens"}, &structs.IdentityListResponse{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("unknown kind: %v", err)
	}
}
