package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableAppCredentials holds Keystone's application credentials.
const TableAppCredentials = "application_credentials"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableAppCredentials,
			Indexes: map[string]*memdb.IndexSchema{
				"id": idIndex("ID"),
				// A name is unique among one user's credentials, as
				// Keystone's.
				"name": {Name: "name", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "UserID"},
					&memdb.StringFieldIndex{Field: "Name"},
				}}},
				"user":    {Name: "user", Indexer: &memdb.StringFieldIndex{Field: "UserID"}},
				"project": {Name: "project", Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ApplicationCredentialSnapshot,
		table:      TableAppCredentials,
		newRecord:  func() any { return new(structs.ApplicationCredential) },
	})
	registerApply(structs.ApplicationCredentialType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ApplicationCredentialEntry
		if err := decodeBody(structs.ApplicationCredentialType, body, &e); err != nil {
			return err
		}
		return s.ApplicationCredential(index, &e)
	})
}

// AppCredNotFound is Keystone's error for a missing application
// credential.
func AppCredNotFound(id string) error {
	return structs.Errorf(structs.KindNotFound, "Could not find application credential: %s.", id)
}

// ApplicationCredential applies an ApplicationCredentialEntry. A create
// needs the user and the project to exist, a new id, a name the user's
// other credentials do not have, and a secret hash.
func (s *StateStore) ApplicationCredential(index uint64, e *structs.ApplicationCredentialEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	switch e.Op {
	case structs.AppCredOpCreate:
		if err := insertAppCred(txn, index, e.Credential); err != nil {
			return err
		}
	case structs.AppCredOpDelete:
		existing, err := first[*structs.ApplicationCredential](txn, nil, TableAppCredentials, "id", e.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			return AppCredNotFound(e.ID)
		}
		if err := txn.Delete(TableAppCredentials, existing); err != nil {
			return fmt.Errorf("delete application credential: %w", err)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown application credential operation %q", e.Op)
	}
	return commitAt(txn, index, TableAppCredentials)
}

func insertAppCred(txn *memdb.Txn, index uint64, c *structs.ApplicationCredential) error {
	if c == nil || c.ID == "" || len(c.SecretHash) == 0 {
		return structs.Errorf(structs.KindInvalid, "application credential create without an id and a secret hash")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if u, err := first[*structs.User](txn, nil, TableUsers, "id", c.UserID); err != nil || u == nil {
		return firstError(err, structs.Errorf(structs.KindNotFound, "Could not find user: %s.", c.UserID))
	}
	if p, err := first[*structs.Project](txn, nil, TableProjects, "id", c.ProjectID); err != nil || p == nil {
		return firstError(err, structs.Errorf(structs.KindNotFound, "Could not find project: %s.", c.ProjectID))
	}
	if existing, err := first[*structs.ApplicationCredential](txn, nil, TableAppCredentials, "id", c.ID); err != nil || existing != nil {
		return firstError(err, structs.Errorf(structs.KindConflict, "Application credential %s already exists.", c.ID))
	}
	if existing, err := first[*structs.ApplicationCredential](txn, nil, TableAppCredentials, "name", c.UserID, c.Name); err != nil || existing != nil {
		return firstError(err, structs.Errorf(structs.KindConflict,
			"Conflict occurred attempting to store application_credential - Duplicate entry found with name %s.", c.Name))
	}
	cc := *c
	cc.CreateIndex, cc.ModifyIndex = index, index
	if err := txn.Insert(TableAppCredentials, &cc); err != nil {
		return fmt.Errorf("insert application credential: %w", err)
	}
	return nil
}

// deleteAppCredsOf deletes the application credentials of a user or a
// project (index "user" or "project") being deleted, and reports
// whether there were any.
func deleteAppCredsOf(txn *memdb.Txn, index, id string) (bool, error) {
	n, err := txn.DeleteAll(TableAppCredentials, index, id)
	if err != nil {
		return false, fmt.Errorf("delete application credentials of %s %s: %w", index, id, err)
	}
	return n > 0, nil
}

// AppCredByID returns an application credential or nil.
func (s *StateStore) AppCredByID(ws memdb.WatchSet, id string) (*structs.ApplicationCredential, error) {
	return first[*structs.ApplicationCredential](s.ReadTxn(), ws, TableAppCredentials, "id", id)
}

// AppCredByName returns a user's application credential of that name,
// or nil.
func (s *StateStore) AppCredByName(ws memdb.WatchSet, userID, name string) (*structs.ApplicationCredential, error) {
	return first[*structs.ApplicationCredential](s.ReadTxn(), ws, TableAppCredentials, "name", userID, name)
}

// AppCredsOfUser lists a user's application credentials by creation.
func (s *StateStore) AppCredsOfUser(ws memdb.WatchSet, userID string) ([]*structs.ApplicationCredential, error) {
	out, err := list[*structs.ApplicationCredential](s.ReadTxn(), ws, TableAppCredentials, "user", userID)
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, err
}
