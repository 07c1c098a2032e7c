package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableEC2Credentials holds the EC2-style credentials of the S3 API.
const TableEC2Credentials = "ec2_credentials"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableEC2Credentials,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("Access"),
				"user": {Name: "user", Indexer: &memdb.StringFieldIndex{Field: "UserID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.EC2CredentialSnapshot,
		table:      TableEC2Credentials,
		newRecord:  func() any { return new(structs.EC2Credential) },
	})
	registerApply(structs.EC2CredentialType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.EC2CredentialEntry
		if err := decodeBody(structs.EC2CredentialType, body, &e); err != nil {
			return err
		}
		return s.EC2Credential(index, &e)
	})
}

// EC2CredentialNotFound is Keystone's error for a missing credential.
func EC2CredentialNotFound(access string) error {
	return structs.Errorf(structs.KindNotFound, "Could not find credential: %s.", access)
}

// EC2Credential applies an EC2CredentialEntry. A create needs the user
// and the project to exist; the access key must be new.
func (s *StateStore) EC2Credential(index uint64, e *structs.EC2CredentialEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	switch e.Op {
	case structs.S3OpCreate:
		c := e.Credential
		if c == nil || c.Access == "" || c.Secret == "" {
			return structs.Errorf(structs.KindInvalid, "credential create without an access key and a secret")
		}
		if u, err := first[*structs.User](txn, nil, TableUsers, "id", c.UserID); err != nil || u == nil {
			return firstError(err, structs.Errorf(structs.KindNotFound, "Could not find user: %s.", c.UserID))
		}
		if p, err := first[*structs.Project](txn, nil, TableProjects, "id", c.ProjectID); err != nil || p == nil {
			return firstError(err, structs.Errorf(structs.KindNotFound, "Could not find project: %s.", c.ProjectID))
		}
		if existing, err := first[*structs.EC2Credential](txn, nil, TableEC2Credentials, "id", c.Access); err != nil || existing != nil {
			return firstError(err, structs.Errorf(structs.KindConflict, "Credential %s already exists.", c.Access))
		}
		cc := *c
		cc.CreateIndex, cc.ModifyIndex = index, index
		if err := txn.Insert(TableEC2Credentials, &cc); err != nil {
			return fmt.Errorf("insert credential: %w", err)
		}
	case structs.S3OpDelete:
		existing, err := first[*structs.EC2Credential](txn, nil, TableEC2Credentials, "id", e.Access)
		if err != nil {
			return err
		}
		if existing == nil {
			return EC2CredentialNotFound(e.Access)
		}
		if err := txn.Delete(TableEC2Credentials, existing); err != nil {
			return fmt.Errorf("delete credential: %w", err)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown credential operation %q", e.Op)
	}
	return commitAt(txn, index, TableEC2Credentials)
}

// EC2CredentialByAccess returns a credential or nil.
func (s *StateStore) EC2CredentialByAccess(ws memdb.WatchSet, access string) (*structs.EC2Credential, error) {
	return first[*structs.EC2Credential](s.ReadTxn(), ws, TableEC2Credentials, "id", access)
}

// EC2CredentialsOfUser lists a user's credentials by creation.
func (s *StateStore) EC2CredentialsOfUser(ws memdb.WatchSet, userID string) ([]*structs.EC2Credential, error) {
	out, err := list[*structs.EC2Credential](s.ReadTxn(), ws, TableEC2Credentials, "user", userID)
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, err
}
