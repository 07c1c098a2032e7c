package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Identity table names, for Index and blocking queries.
const (
	TableProjects      = "projects"
	TableUsers         = "users"
	TableRoles         = "roles"
	TableAssignments   = "assignments"
	TableSigningKeys   = "signing_keys"
	TableRevokedTokens = "revoked_tokens"
)

// nameInDomain is the unique (name, domain) index of projects and users.
func nameInDomain() *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: "name", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.StringFieldIndex{Field: "Name"},
		&memdb.StringFieldIndex{Field: "DomainID"},
	}}}
}

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableProjects, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"), "name": nameInDomain(),
		}}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableUsers, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"), "name": nameInDomain(),
		}}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableRoles, Indexes: map[string]*memdb.IndexSchema{
			"id":   idIndex("ID"),
			"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableAssignments, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "UserID"},
				&memdb.StringFieldIndex{Field: "ProjectID"},
				&memdb.StringFieldIndex{Field: "RoleID"},
			}}},
			"user":    {Name: "user", Indexer: &memdb.StringFieldIndex{Field: "UserID"}},
			"project": {Name: "project", Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			"role":    {Name: "role", Indexer: &memdb.StringFieldIndex{Field: "RoleID"}},
		}}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableSigningKeys, Indexes: map[string]*memdb.IndexSchema{"id": idIndex("ID")}}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{Name: TableRevokedTokens, Indexes: map[string]*memdb.IndexSchema{"id": idIndex("AuditID")}}
	})
	for _, t := range []snapshotTable{
		{recordType: structs.ProjectSnapshot, table: TableProjects, newRecord: func() any { return new(structs.Project) }},
		{recordType: structs.UserSnapshot, table: TableUsers, newRecord: func() any { return new(structs.User) }},
		{recordType: structs.RoleSnapshot, table: TableRoles, newRecord: func() any { return new(structs.Role) }},
		{recordType: structs.AssignmentSnapshot, table: TableAssignments, newRecord: func() any { return new(structs.RoleAssignment) }},
		{recordType: structs.SigningKeySnapshot, table: TableSigningKeys, newRecord: func() any { return new(structs.SigningKey) }},
		{recordType: structs.RevokedSnapshot, table: TableRevokedTokens, newRecord: func() any { return new(structs.RevokedToken) }},
	} {
		registerSnapshot(t)
	}
	registerApply(structs.IdentityUpsertType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.IdentityUpsertEntry
		if err := decodeBody(structs.IdentityUpsertType, body, &e); err != nil {
			return err
		}
		return s.UpsertIdentity(index, &e)
	})
	registerApply(structs.IdentityDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.IdentityDeleteEntry
		if err := decodeBody(structs.IdentityDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteIdentity(index, &e)
	})
	registerApply(structs.SigningKeyUpsertType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.SigningKeyEntry
		if err := decodeBody(structs.SigningKeyUpsertType, body, &e); err != nil {
			return err
		}
		return s.UpsertSigningKey(index, e.Key)
	})
	registerApply(structs.TokenRevokeType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.TokenRevokeEntry
		if err := decodeBody(structs.TokenRevokeType, body, &e); err != nil {
			return err
		}
		return s.RevokeTokens(index, e.Tokens, e.PruneBefore)
	})
}

// UpsertIdentity creates or replaces projects, users, roles and role
// assignments at index, in that order, so an assignment may refer to
// objects of the same entry. A name used by another object of its kind is
// a conflict and an assignment to a missing user, project or role is
// invalid; either way nothing of the entry is written. A user without a
// PasswordHash keeps the one it had.
func (s *StateStore) UpsertIdentity(index uint64, e *structs.IdentityUpsertEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if e.Bootstrap {
		if u, err := txn.First(TableUsers, "id"); err != nil {
			return fmt.Errorf("bootstrap user lookup: %w", err)
		} else if u != nil {
			return structs.Errorf(structs.KindConflict, "the cluster is already bootstrapped: it has users")
		}
	}
	var touched []string
	for _, step := range []struct {
		table string
		n     int
		apply func(*memdb.Txn, uint64, *structs.IdentityUpsertEntry) error
	}{
		{TableProjects, len(e.Projects), upsertProjects},
		{TableUsers, len(e.Users), upsertUsers},
		{TableRoles, len(e.Roles), upsertRoles},
		{TableAssignments, len(e.Assignments), upsertAssignments},
	} {
		if step.n == 0 {
			continue
		}
		touched = append(touched, step.table)
		if err := step.apply(txn, index, e); err != nil {
			return err
		}
	}
	return commitAt(txn, index, touched...)
}

// upsertProjects stores projects, each name unique in its domain.
func upsertProjects(txn *memdb.Txn, index uint64, e *structs.IdentityUpsertEntry) error {
	for _, p := range e.Projects {
		if p == nil {
			return structs.Errorf(structs.KindInvalid, "identity upsert with an empty project")
		}
		c := *p
		if err := checkUniqueName(txn, TableProjects, "project", c.ID, c.Name, c.DomainID); err != nil {
			return err
		}
		err := upsert(txn, TableProjects, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.Project).CreateIndex }, c.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// upsertUsers stores users; one given without a password hash keeps
// the one it has.
func upsertUsers(txn *memdb.Txn, index uint64, e *structs.IdentityUpsertEntry) error {
	for _, u := range e.Users {
		if u == nil {
			return structs.Errorf(structs.KindInvalid, "identity upsert with an empty user")
		}
		c := *u
		if err := checkUniqueName(txn, TableUsers, "user", c.ID, c.Name, c.DomainID); err != nil {
			return err
		}
		if c.PasswordHash == nil {
			old, err := txn.First(TableUsers, "id", c.ID)
			if err != nil {
				return fmt.Errorf("user lookup %s: %w", c.ID, err)
			}
			if old != nil {
				c.PasswordHash = old.(*structs.User).PasswordHash
			}
		}
		err := upsert(txn, TableUsers, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.User).CreateIndex }, c.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// upsertRoles stores roles, each name unique.
func upsertRoles(txn *memdb.Txn, index uint64, e *structs.IdentityUpsertEntry) error {
	for _, r := range e.Roles {
		if r == nil {
			return structs.Errorf(structs.KindInvalid, "identity upsert with an empty role")
		}
		c := *r
		if err := checkUniqueName(txn, TableRoles, "role", c.ID, c.Name); err != nil {
			return err
		}
		err := upsert(txn, TableRoles, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.Role).CreateIndex }, c.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// upsertAssignments stores role assignments, each of a user, project
// and role that exist (in the same entry or before).
func upsertAssignments(txn *memdb.Txn, index uint64, e *structs.IdentityUpsertEntry) error {
	for _, a := range e.Assignments {
		if a == nil {
			return structs.Errorf(structs.KindInvalid, "identity upsert with an empty role assignment")
		}
		c := *a
		for _, ref := range []struct{ table, what, id string }{
			{TableUsers, "user", c.UserID}, {TableProjects, "project", c.ProjectID}, {TableRoles, "role", c.RoleID},
		} {
			obj, err := txn.First(ref.table, "id", ref.id)
			if err != nil {
				return fmt.Errorf("%s lookup %s: %w", ref.what, ref.id, err)
			}
			if obj == nil {
				return structs.Errorf(structs.KindInvalid, "role assignment refers to %s %q, which does not exist", ref.what, ref.id)
			}
		}
		err := upsert(txn, TableAssignments, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.RoleAssignment).CreateIndex }, c.UserID, c.ProjectID, c.RoleID)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkUniqueName refuses a name (within a domain, for projects and
// users) that another object of the table already has.
func checkUniqueName(txn *memdb.Txn, table, what, id string, name ...any) error {
	if id == "" {
		return structs.Errorf(structs.KindInvalid, "%s %v has no id", what, name[0])
	}
	existing, err := txn.First(table, "name", name...)
	if err != nil {
		return fmt.Errorf("%s lookup by name: %w", what, err)
	}
	if existing == nil {
		return nil
	}
	var other string
	switch o := existing.(type) {
	case *structs.Project:
		other = o.ID
	case *structs.User:
		other = o.ID
	case *structs.Role:
		other = o.ID
	}
	if other != id {
		return structs.Errorf(structs.KindConflict, "%s name %q is used by %s %s", what, name[0], what, other)
	}
	return nil
}

// DeleteIdentity deletes role assignments, projects, users and roles at
// index; deleting a project, user or role deletes its assignments too. A
// missing object fails the whole entry.
func (s *StateStore) DeleteIdentity(index uint64, e *structs.IdentityDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	touched := map[string]bool{}
	for _, a := range e.Assignments {
		if a == nil {
			return structs.Errorf(structs.KindInvalid, "identity delete with an empty role assignment")
		}
		if err := deleteByID(txn, TableAssignments, "role assignment", a.UserID, a.ProjectID, a.RoleID); err != nil {
			return err
		}
		touched[TableAssignments] = true
	}
	for _, del := range []struct {
		table, what, cascade string
		ids                  []string
	}{
		{TableProjects, "project", "project", e.ProjectIDs},
		{TableUsers, "user", "user", e.UserIDs},
		{TableRoles, "role", "role", e.RoleIDs},
	} {
		for _, id := range del.ids {
			if err := deleteByID(txn, del.table, del.what, id); err != nil {
				return err
			}
			touched[del.table] = true
			n, err := txn.DeleteAll(TableAssignments, del.cascade, id)
			if err != nil {
				return fmt.Errorf("delete role assignments of %s %s: %w", del.what, id, err)
			}
			if n > 0 {
				touched[TableAssignments] = true
			}
			if del.table != TableRoles {
				// A user's or a project's application credentials go
				// with it, as Keystone's.
				had, err := deleteAppCredsOf(txn, del.cascade, id)
				if err != nil {
					return err
				}
				touched[TableAppCredentials] = touched[TableAppCredentials] || had
			}
		}
	}
	tables := make([]string, 0, len(touched))
	for t := range touched {
		tables = append(tables, t)
	}
	return commitAt(txn, index, tables...)
}

// UpsertSigningKey stores a token signing key at index.
func (s *StateStore) UpsertSigningKey(index uint64, key *structs.SigningKey) error {
	if key == nil || key.ID == "" || len(key.Secret) == 0 {
		return structs.Errorf(structs.KindInvalid, "a signing key needs an id and a secret")
	}
	c := *key
	return s.upsertOne(index, TableSigningKeys, &c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.SigningKey).CreateIndex }, c.ID)
}

// RevokeTokens records revoked tokens (and revocation events) at index
// and drops the records that expired before pruneBefore (unix
// nanoseconds; 0 keeps everything).
func (s *StateStore) RevokeTokens(index uint64, tokens []*structs.RevokedToken, pruneBefore int64) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, t := range tokens {
		if t == nil || t.AuditID == "" {
			return structs.Errorf(structs.KindInvalid, "a revoked token needs an audit id")
		}
		c := *t
		err := upsert(txn, TableRevokedTokens, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.RevokedToken).CreateIndex }, c.AuditID)
		if err != nil {
			return err
		}
	}
	if pruneBefore > 0 {
		it, err := txn.Get(TableRevokedTokens, "id")
		if err != nil {
			return fmt.Errorf("list revoked tokens: %w", err)
		}
		var expired []any
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if exp := raw.(*structs.RevokedToken).ExpiresAt; exp > 0 && exp < pruneBefore {
				expired = append(expired, raw)
			}
		}
		for _, raw := range expired {
			if err := txn.Delete(TableRevokedTokens, raw); err != nil {
				return fmt.Errorf("prune revoked token: %w", err)
			}
		}
	}
	return commitAt(txn, index, TableRevokedTokens)
}
