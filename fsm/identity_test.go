package fsm

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateIdentity fills every identity table at indexes up to 6, so the
// general snapshot test (which expects LatestIndex 6) covers them too.
func populateIdentity(t *testing.T, s *StateStore) {
	t.Helper()
	err := s.UpsertIdentity(2, &structs.IdentityUpsertEntry{
		Projects:    []*structs.Project{{ID: "p1", Name: "admin", DomainID: "default", Enabled: true}},
		Users:       []*structs.User{{ID: "u1", Name: "admin", DomainID: "default", Enabled: true, PasswordHash: []byte("hash")}},
		Roles:       []*structs.Role{{ID: "r1", Name: "admin"}},
		Assignments: []*structs.RoleAssignment{{UserID: "u1", ProjectID: "p1", RoleID: "r1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertSigningKey(3, &structs.SigningKey{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef"), CreatedAt: 7}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTokens(4, []*structs.RevokedToken{{AuditID: "a1", ExpiresAt: 99}}, 0); err != nil {
		t.Fatal(err)
	}
}

func identityEntry() *structs.IdentityUpsertEntry {
	return &structs.IdentityUpsertEntry{
		Projects: []*structs.Project{{ID: "p1", Name: "admin", DomainID: "default", Enabled: true},
			{ID: "p2", Name: "demo", DomainID: "default", Enabled: true}},
		Users: []*structs.User{{ID: "u1", Name: "admin", DomainID: "default", Enabled: true, PasswordHash: []byte("h1")},
			{ID: "u2", Name: "demo", DomainID: "default", Enabled: true, PasswordHash: []byte("h2")}},
		Roles: []*structs.Role{{ID: "r1", Name: "admin"}, {ID: "r2", Name: "member"}},
		Assignments: []*structs.RoleAssignment{{UserID: "u1", ProjectID: "p1", RoleID: "r1"},
			{UserID: "u2", ProjectID: "p2", RoleID: "r2"}, {UserID: "u1", ProjectID: "p2", RoleID: "r2"}},
	}
}

func TestApplyIdentityUpsert(t *testing.T) {
	t.Parallel()
	f := testFSM(t)
	if resp := apply(t, f, 10, structs.IdentityUpsertType, identityEntry()); resp != nil {
		t.Fatalf("upsert: %v", resp)
	}
	s := f.State()
	p, _ := s.ProjectByName(nil, "default", "demo")
	u, _ := s.UserByName(nil, "default", "admin")
	r, _ := s.RoleByName(nil, "member")
	if p == nil || p.ID != "p2" || u == nil || u.ID != "u1" || r == nil || r.ID != "r2" || p.CreateIndex != 10 {
		t.Fatalf("lookups by name: %+v %+v %+v", p, u, r)
	}
	as, _ := s.Assignments(nil, "u1", "", "")
	if len(as) != 2 {
		t.Fatalf("u1 has %d assignments", len(as))
	}
	if as, _ = s.Assignments(nil, "", "p2", "r2"); len(as) != 2 {
		t.Fatalf("p2/member has %d assignments", len(as))
	}
	for _, table := range []string{TableProjects, TableUsers, TableRoles, TableAssignments} {
		if idx := s.Index(table); idx != 10 {
			t.Fatalf("%s index %d", table, idx)
		}
	}

	// An update without a hash keeps the password; CreateIndex stays.
	upd := &structs.User{ID: "u1", Name: "admin", DomainID: "default", Email: "a@example.com"}
	if resp := apply(t, f, 11, structs.IdentityUpsertType, &structs.IdentityUpsertEntry{Users: []*structs.User{upd}}); resp != nil {
		t.Fatal(resp)
	}
	u, _ = f.State().UserByID(nil, "u1")
	if string(u.PasswordHash) != "h1" || u.Email != "a@example.com" || u.CreateIndex != 10 || u.ModifyIndex != 11 || u.Enabled {
		t.Fatalf("updated user %+v", u)
	}
	if idx := f.State().Index(TableProjects); idx != 10 {
		t.Fatalf("an untouched table's index moved to %d", idx)
	}
}

func TestApplyIdentityUpsertRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	f := testFSM(t)
	apply(t, f, 1, structs.IdentityUpsertType, identityEntry())
	cases := map[string]struct {
		entry *structs.IdentityUpsertEntry
		kind  structs.ErrorKind
	}{
		"project name taken": {&structs.IdentityUpsertEntry{
			Projects: []*structs.Project{{ID: "p3", Name: "new", DomainID: "default"}, {ID: "p4", Name: "demo", DomainID: "default"}},
		}, structs.KindConflict},
		"user name taken": {&structs.IdentityUpsertEntry{
			Projects: []*structs.Project{{ID: "p3", Name: "new", DomainID: "default"}},
			Users:    []*structs.User{{ID: "u9", Name: "demo", DomainID: "default"}},
		}, structs.KindConflict},
		"role name taken": {&structs.IdentityUpsertEntry{Roles: []*structs.Role{{ID: "r9", Name: "admin"}}}, structs.KindConflict},
		"missing user": {&structs.IdentityUpsertEntry{
			Projects:    []*structs.Project{{ID: "p3", Name: "new", DomainID: "default"}},
			Assignments: []*structs.RoleAssignment{{UserID: "nobody", ProjectID: "p3", RoleID: "r1"}},
		}, structs.KindInvalid},
		"missing project": {&structs.IdentityUpsertEntry{
			Assignments: []*structs.RoleAssignment{{UserID: "u1", ProjectID: "nowhere", RoleID: "r1"}},
		}, structs.KindInvalid},
		"missing role": {&structs.IdentityUpsertEntry{
			Assignments: []*structs.RoleAssignment{{UserID: "u1", ProjectID: "p1", RoleID: "nothing"}},
		}, structs.KindInvalid},
	}
	for name, c := range cases {
		resp := apply(t, f, 2, structs.IdentityUpsertType, c.entry)
		if err, ok := resp.(error); !ok || structs.KindOf(err) != c.kind {
			t.Fatalf("%s: resp %v, want kind %s", name, resp, c.kind)
		}
		if p, _ := f.State().ProjectByID(nil, "p3"); p != nil {
			t.Fatalf("%s: a refused entry wrote a project", name)
		}
		if f.State().LatestIndex() != 1 {
			t.Fatalf("%s: a refused entry moved an index", name)
		}
	}
	// Renaming an object to its own name is no conflict.
	same := &structs.IdentityUpsertEntry{Roles: []*structs.Role{{ID: "r1", Name: "admin", Description: "x"}}}
	if resp := apply(t, f, 3, structs.IdentityUpsertType, same); resp != nil {
		t.Fatal(resp)
	}
}

func TestApplyIdentityDeleteCascades(t *testing.T) {
	t.Parallel()
	f := testFSM(t)
	apply(t, f, 1, structs.IdentityUpsertType, identityEntry())
	del := func(index uint64, e *structs.IdentityDeleteEntry) any {
		return apply(t, f, index, structs.IdentityDeleteType, e)
	}
	if resp := del(2, &structs.IdentityDeleteEntry{UserIDs: []string{"u1"}}); resp != nil {
		t.Fatal(resp)
	}
	if as, _ := f.State().Assignments(nil, "u1", "", ""); len(as) != 0 {
		t.Fatalf("deleted user keeps %d assignments", len(as))
	}
	if as, _ := f.State().Assignments(nil, "", "", ""); len(as) != 1 {
		t.Fatalf("%d assignments left, want u2's", len(as))
	}
	if f.State().Index(TableAssignments) != 2 || f.State().Index(TableProjects) != 1 {
		t.Fatal("cascade did not stamp the assignments table alone")
	}
	// A missing id fails the whole entry.
	resp := del(3, &structs.IdentityDeleteEntry{RoleIDs: []string{"r2"}, ProjectIDs: []string{"nope"}})
	if err, ok := resp.(error); !ok || structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete missing = %v", resp)
	}
	if r, _ := f.State().RoleByID(nil, "r2"); r == nil {
		t.Fatal("a failed delete removed a role")
	}
	if resp := del(4, &structs.IdentityDeleteEntry{RoleIDs: []string{"r2"}}); resp != nil {
		t.Fatal(resp)
	}
	if as, _ := f.State().Assignments(nil, "", "", ""); len(as) != 0 {
		t.Fatalf("deleted role keeps %d assignments", len(as))
	}
	apply(t, f, 5, structs.IdentityUpsertType, &structs.IdentityUpsertEntry{
		Assignments: []*structs.RoleAssignment{{UserID: "u2", ProjectID: "p2", RoleID: "r1"}}})
	if resp := del(6, &structs.IdentityDeleteEntry{ProjectIDs: []string{"p2"}}); resp != nil {
		t.Fatal(resp)
	}
	if as, _ := f.State().Assignments(nil, "u2", "", ""); len(as) != 0 {
		t.Fatalf("deleted project keeps %d assignments", len(as))
	}
	a := &structs.RoleAssignment{UserID: "u2", ProjectID: "p1", RoleID: "r1"}
	resp = del(7, &structs.IdentityDeleteEntry{Assignments: []*structs.RoleAssignment{a}})
	if err, ok := resp.(error); !ok || structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete of a missing assignment = %v", resp)
	}
}

func TestApplySigningKeyAndRevocations(t *testing.T) {
	t.Parallel()
	f := testFSM(t)
	key := &structs.SigningKey{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32), CreatedAt: 5}
	if resp := apply(t, f, 1, structs.SigningKeyUpsertType, &structs.SigningKeyEntry{Key: key}); resp != nil {
		t.Fatal(resp)
	}
	if keys, _ := f.State().SigningKeys(nil); len(keys) != 1 || !bytes.Equal(keys[0].Secret, key.Secret) || keys[0].CreateIndex != 1 {
		t.Fatalf("keys %+v", keys)
	}
	if resp := apply(t, f, 2, structs.SigningKeyUpsertType, &structs.SigningKeyEntry{}); resp == nil {
		t.Fatal("empty signing key accepted")
	}

	revoke := &structs.TokenRevokeEntry{Tokens: []*structs.RevokedToken{
		{AuditID: "old", ExpiresAt: 100}, {AuditID: "new", ExpiresAt: 1000},
		{AuditID: "event-1", ExpiresAt: 1000, UserID: "u1", IssuedBefore: 500},
	}}
	if resp := apply(t, f, 3, structs.TokenRevokeType, revoke); resp != nil {
		t.Fatal(resp)
	}
	if got, _ := f.State().RevokedTokens(nil); len(got) != 3 || !got[0].IsEvent() {
		t.Fatalf("revoked %+v", got)
	}
	// A later revocation prunes the records that expired before it.
	prune := &structs.TokenRevokeEntry{Tokens: []*structs.RevokedToken{{AuditID: "x", ExpiresAt: 2000}}, PruneBefore: 200}
	if resp := apply(t, f, 4, structs.TokenRevokeType, prune); resp != nil {
		t.Fatal(resp)
	}
	got, _ := f.State().RevokedTokens(nil)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.AuditID)
	}
	if !reflect.DeepEqual(ids, []string{"event-1", "new", "x"}) {
		t.Fatalf("after prune: %v", ids)
	}
	if resp := apply(t, f, 5, structs.TokenRevokeType, &structs.TokenRevokeEntry{Tokens: []*structs.RevokedToken{{}}}); resp == nil {
		t.Fatal("revocation without audit id accepted")
	}
}

func TestIdentitySnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	f := testFSM(t)
	apply(t, f, 1, structs.IdentityUpsertType, identityEntry())
	populateIdentity(t, testFSM(t).State()) // the helper itself must work on a fresh store
	apply(t, f, 2, structs.SigningKeyUpsertType, &structs.SigningKeyEntry{Key: &structs.SigningKey{ID: "k", Secret: []byte("s")}})
	apply(t, f, 3, structs.TokenRevokeType, &structs.TokenRevokeEntry{Tokens: []*structs.RevokedToken{{AuditID: "a", ExpiresAt: 9}}})
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	want, got := dump(t, f.State()), dump(t, g.State())
	for _, table := range []string{TableProjects, TableUsers, TableRoles, TableAssignments, TableSigningKeys, TableRevokedTokens} {
		if len(want[table]) == 0 {
			t.Fatalf("table %s was not populated", table)
		}
		if !reflect.DeepEqual(want[table], got[table]) {
			t.Fatalf("table %s differs after restore:\nwant %#v\ngot  %#v", table, want[table], got[table])
		}
	}
	// Indexes survive, and name lookups work on the restored store.
	if g.State().Index(TableAssignments) != 1 || g.State().Index(TableRevokedTokens) != 3 {
		t.Fatal("table indexes lost")
	}
	if u, _ := g.State().UserByName(nil, "default", "demo"); u == nil || string(u.PasswordHash) != "h2" {
		t.Fatalf("restored user %+v", u)
	}
}
