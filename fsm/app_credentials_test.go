package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateAppCreds adds an application credential of populateIdentity's
// user, for the snapshot round trip.
func populateAppCreds(t *testing.T, s *StateStore) {
	t.Helper()
	err := s.ApplicationCredential(5, &structs.ApplicationCredentialEntry{Op: structs.AppCredOpCreate,
		Credential: &structs.ApplicationCredential{ID: "ac1", Name: "ci", UserID: "u1", ProjectID: "p1",
			SecretHash: []byte("hash"), RoleIDs: []string{"r1"}, ExpiresAt: 5, CreatedAt: 1}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestApplicationCredentials(t *testing.T) {
	s := testFSM(t).State()
	if err := s.UpsertIdentity(1, identityEntry()); err != nil {
		t.Fatal(err)
	}
	create := func(index uint64, c structs.ApplicationCredential) error {
		return s.ApplicationCredential(index, &structs.ApplicationCredentialEntry{Op: structs.AppCredOpCreate, Credential: &c})
	}
	ok := structs.ApplicationCredential{ID: "ac1", Name: "ci", UserID: "u2", ProjectID: "p2", SecretHash: []byte("h"), RoleIDs: []string{"r2"}}
	if err := create(2, ok); err != nil {
		t.Fatal(err)
	}
	// The same name is another user's to use, not the same user's.
	other := ok
	other.ID, other.UserID, other.ProjectID = "ac2", "u1", "p1"
	if err := create(3, other); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]structs.ApplicationCredential{
		"duplicate name": {ID: "ac3", Name: "ci", UserID: "u2", ProjectID: "p2", SecretHash: []byte("h")},
		"duplicate id":   {ID: "ac1", Name: "x", UserID: "u2", ProjectID: "p2", SecretHash: []byte("h")},
		"no hash":        {ID: "ac4", Name: "y", UserID: "u2", ProjectID: "p2"},
		"no user":        {ID: "ac5", Name: "z", UserID: "nobody", ProjectID: "p2", SecretHash: []byte("h")},
	} {
		if err := create(4, c); err == nil {
			t.Errorf("%s: created", name)
		}
	}
	if c, err := s.AppCredByName(nil, "u2", "ci"); err != nil || c == nil || c.ID != "ac1" || c.CreateIndex != 2 {
		t.Fatalf("by name: %+v %v", c, err)
	}
	if s.Index(TableAppCredentials) != 3 {
		t.Fatalf("table index %d", s.Index(TableAppCredentials))
	}
	// A user's and a project's deletion take their credentials along.
	if err := s.DeleteIdentity(5, &structs.IdentityDeleteEntry{UserIDs: []string{"u2"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteIdentity(6, &structs.IdentityDeleteEntry{ProjectIDs: []string{"p1"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ac1", "ac2"} {
		if c, err := s.AppCredByID(nil, id); c != nil || err != nil {
			t.Fatalf("%s after its owner's deletion: %+v %v", id, c, err)
		}
	}
	if s.Index(TableAppCredentials) != 6 {
		t.Fatalf("table index after the cascade %d", s.Index(TableAppCredentials))
	}
	err := s.ApplicationCredential(7, &structs.ApplicationCredentialEntry{Op: structs.AppCredOpDelete, ID: "ac1"})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete of a missing credential: %v", err)
	}
}
