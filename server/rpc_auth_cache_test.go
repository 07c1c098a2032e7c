package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestRPCRevocationBeatsTheVerifiedTokenCache checks that a token the
// servers verified (and cached, with the signing keys' and revocations'
// indexes of the time) is refused once revoked: the revocation's entry
// closes the watch the cached indexes hang on.
func TestRPCRevocationBeatsTheVerifiedTokenCache(t *testing.T) {
	t.Parallel()
	s := aclServer(t)
	r := newRemote(t, s)
	admin := r.token("admin", "admin")
	victim := r.token("admin", "admin")
	list := func(token string) error {
		return r.call("Instance.List", &structs.InstanceListRequest{QueryOptions: structs.QueryOptions{AuthToken: token}},
			&structs.InstanceListResponse{})
	}
	// Twice: the second call is answered from the cache.
	for range 2 {
		if err := list(victim.Token); err != nil {
			t.Fatalf("list with a fresh token: %v", err)
		}
	}
	if err := r.call("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: victim.Claims.AuditID,
		ExpiresAt: victim.Claims.ExpiresAt, WriteRequest: structs.WriteRequest{AuthToken: admin.Token}}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if err := list(victim.Token); structs.KindOf(err) != structs.KindUnauthenticated {
		t.Fatalf("list with a revoked token: got %v, want %s", err, structs.KindUnauthenticated)
	}
	if err := list(admin.Token); err != nil {
		t.Fatalf("list with a token not revoked: %v", err)
	}
}
