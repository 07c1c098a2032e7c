package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// appCred creates an application credential of a seeded user on its
// project, with all its roles there.
func appCred(t *testing.T, s *Server, user, name string) *structs.AppCredResponse {
	t.Helper()
	u := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: user}).Users[0]
	p := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, Name: user}).Projects[0]
	var out structs.AppCredResponse
	if err := s.RPC("Identity.AppCredCreate", &structs.AppCredCreateRequest{UserID: u.ID, ProjectID: p.ID, Name: name}, &out); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if out.Secret == "" || len(out.Credential.SecretHash) != 0 || len(out.Credential.RoleIDs) == 0 {
		t.Fatalf("created %+v", out)
	}
	return &out
}

func appCredToken(s *Server, ac *structs.AppCredResponse) (*structs.TokenIssueResponse, error) {
	return issueToken(s, &structs.TokenIssueRequest{Method: structs.AppCredTokenMethod, AppCredID: ac.Credential.ID, AppCredSecret: ac.Secret})
}

// TestAppCredFollowsItsUser: a credential stops authenticating when its
// user loses a role it delegates, and goes with its user.
func TestAppCredFollowsItsUser(t *testing.T) {
	t.Parallel()
	s := signingServer(t)
	ac := appCred(t, s, "demo", "follows")
	tok, err := appCredToken(s, ac)
	if err != nil || tok.Claims.AppCredID != ac.Credential.ID || !tok.Claims.AppCredRestricted ||
		tok.Claims.ProjectID != ac.Credential.ProjectID || len(tok.Claims.Roles) != len(ac.Credential.RoleIDs) {
		t.Fatalf("token %+v %v", tok.Claims, err)
	}
	// The secret is stored hashed, never in the clear.
	stored, err := s.FSM().State().AppCredByID(nil, ac.Credential.ID)
	if err != nil || stored == nil || len(stored.SecretHash) == 0 || string(stored.SecretHash) == ac.Secret {
		t.Fatalf("stored %+v %v", stored, err)
	}
	a := &structs.RoleAssignment{UserID: ac.Credential.UserID, ProjectID: ac.Credential.ProjectID, RoleID: ac.Credential.RoleIDs[0]}
	if err := s.RPC("Identity.Delete", &structs.IdentityDeleteRequest{Assignments: []*structs.RoleAssignment{a}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if _, err := appCredToken(s, ac); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("token after the role was revoked: %v", err)
	}
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Assignments: []*structs.RoleAssignment{a}}, &structs.IdentityUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	if _, err := appCredToken(s, ac); err != nil {
		t.Fatalf("token once the role is back: %v", err)
	}
	// Deleting the user deletes its credentials.
	if err := s.RPC("Identity.Delete", &structs.IdentityDeleteRequest{UserIDs: []string{ac.Credential.UserID}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.FSM().State().AppCredByID(nil, ac.Credential.ID); c != nil || err != nil {
		t.Fatalf("credential of a deleted user: %+v %v", c, err)
	}
}

// TestAppCredWaitsForTheUpgrade: until every server applies application
// credentials, none is created.
func TestAppCredWaitsForTheUpgrade(t *testing.T) {
	t.Parallel()
	s := signingServer(t)
	if err := s.setAdvertisedFSMLevel(structs.FSMLevelSegments); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, s, structs.FSMLevelSegments)
	u := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: "admin"}).Users[0]
	p := identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, Name: "admin"}).Projects[0]
	err := s.RPC("Identity.AppCredCreate", &structs.AppCredCreateRequest{UserID: u.ID, ProjectID: p.ID, Name: "early"}, &structs.AppCredResponse{})
	if structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("create during the upgrade: %v", err)
	}
	if err := s.setAdvertisedFSMLevel(structs.CurrentFSMLevel); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, s, structs.CurrentFSMLevel)
	appCred(t, s, "admin", "after-upgrade")
}

// TestAppCredRestrictedTokenRPC: with ACLs on, a restricted credential's
// token, an admin's too, creates and deletes no credential over RPC.
func TestAppCredRestrictedTokenRPC(t *testing.T) {
	t.Parallel()
	s := aclServer(t)
	r := newRemote(t, s)
	admin := r.token("admin", "admin")
	var ac structs.AppCredResponse
	create := &structs.AppCredCreateRequest{UserID: admin.Claims.UserID, ProjectID: admin.Claims.ProjectID, Name: "restricted",
		WriteRequest: structs.WriteRequest{AuthToken: admin.Token}}
	if err := r.call("Identity.AppCredCreate", create, &ac); err != nil {
		t.Fatal(err)
	}
	var tok structs.TokenIssueResponse
	if err := r.call("Identity.IssueToken", &structs.TokenIssueRequest{Method: structs.AppCredTokenMethod, AppCredID: ac.Credential.ID,
		AppCredSecret: ac.Secret}, &tok); err != nil {
		t.Fatal(err)
	}
	create.Name, create.AuthToken = "child", tok.Token
	if err := r.call("Identity.AppCredCreate", create, &structs.AppCredResponse{}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("create with a restricted credential's token: %v", err)
	}
	del := &structs.AppCredDeleteRequest{UserID: admin.Claims.UserID, ID: ac.Credential.ID, WriteRequest: structs.WriteRequest{AuthToken: tok.Token}}
	if err := r.call("Identity.AppCredDelete", del, &structs.GenericResponse{}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("delete with a restricted credential's token: %v", err)
	}
	// A member creates its own, and lists them with an unscoped token.
	demo := r.token("demo", "demo")
	own := &structs.AppCredCreateRequest{UserID: demo.Claims.UserID, ProjectID: demo.Claims.ProjectID, Name: "own",
		WriteRequest: structs.WriteRequest{AuthToken: demo.Token}}
	if err := r.call("Identity.AppCredCreate", own, &structs.AppCredResponse{}); err != nil {
		t.Fatalf("a member's own credential: %v", err)
	}
	var unscoped structs.TokenIssueResponse
	if err := r.call("Identity.IssueToken", &structs.TokenIssueRequest{Method: "password", UserName: "demo", UserDomainName: "Default",
		Password: "demo"}, &unscoped); err != nil {
		t.Fatal(err)
	}
	var list structs.AppCredListResponse
	if err := r.call("Identity.AppCredList", &structs.AppCredListRequest{UserID: demo.Claims.UserID,
		QueryOptions: structs.QueryOptions{AuthToken: unscoped.Token}}, &list); err != nil || len(list.Credentials) != 1 {
		t.Fatalf("list with an unscoped token: %+v %v", list.Credentials, err)
	}
	// Nor does it list another user's.
	if err := r.call("Identity.AppCredList", &structs.AppCredListRequest{UserID: admin.Claims.UserID,
		QueryOptions: structs.QueryOptions{AuthToken: demo.Token}}, &list); err == nil {
		t.Fatalf("demo listed admin's credentials: %+v", list.Credentials)
	}
	// Another user's token does not delete it.
	del.AuthToken = demo.Token
	if err := r.call("Identity.AppCredDelete", del, &structs.GenericResponse{}); err == nil {
		t.Fatal("demo deleted admin's credential")
	}
	del.AuthToken = admin.Token
	if err := r.call("Identity.AppCredDelete", del, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	// The deleted credential's token is revoked.
	if _, err := s.VerifyToken(tok.Token); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("token of a deleted credential: %v", err)
	}
}
