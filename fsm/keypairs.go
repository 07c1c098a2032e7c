package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableKeyPairs is the name of the table, for Index and blocking queries.
const TableKeyPairs = "keypairs"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableKeyPairs,
			Indexes: map[string]*memdb.IndexSchema{
				// Key pairs are named per user, as in Nova.
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "UserID"},
					&memdb.StringFieldIndex{Field: "Name"},
				}}},
				"user": {Name: "user", Indexer: &memdb.StringFieldIndex{Field: "UserID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.KeyPairSnapshot,
		table:      TableKeyPairs,
		newRecord:  func() any { return new(structs.KeyPair) },
	})
	registerApply(structs.KeyPairUpsertRequestType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var req structs.KeyPairUpsertRequest
		if err := decodeBody(structs.KeyPairUpsertRequestType, body, &req); err != nil {
			return err
		}
		return s.UpsertKeyPairs(index, req.KeyPairs)
	})
	registerApply(structs.KeyPairDeleteRequestType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var req structs.KeyPairDeleteRequest
		if err := decodeBody(structs.KeyPairDeleteRequestType, body, &req); err != nil {
			return err
		}
		return s.DeleteKeyPairs(index, req.UserID, req.Names)
	})
}

// UpsertKeyPairs stores key pairs at index.
func (s *StateStore) UpsertKeyPairs(index uint64, kps []*structs.KeyPair) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, kp := range kps {
		if kp == nil {
			return structs.Errorf(structs.KindInvalid, "keypair upsert with an empty keypair")
		}
		c := *kp
		if err := checkKeyPairQuota(txn, &c); err != nil {
			return err
		}
		err := upsert(txn, TableKeyPairs, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.KeyPair).CreateIndex }, c.UserID, c.Name)
		if err != nil {
			return err
		}
	}
	return commitAt(txn, index, TableKeyPairs)
}

// DeleteKeyPairs removes a user's key pairs by name.
func (s *StateStore) DeleteKeyPairs(index uint64, userID string, names []string) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, n := range names {
		if err := deleteByID(txn, TableKeyPairs, "keypair", userID, n); err != nil {
			return err
		}
	}
	return commitAt(txn, index, TableKeyPairs)
}

// KeyPair returns one of a user's key pairs, or nil.
func (s *StateStore) KeyPair(ws memdb.WatchSet, userID, name string) (*structs.KeyPair, error) {
	return first[*structs.KeyPair](s.ReadTxn(), ws, TableKeyPairs, "id", userID, name)
}

// KeyPairsByUser lists a user's key pairs by name.
func (s *StateStore) KeyPairsByUser(ws memdb.WatchSet, userID string) ([]*structs.KeyPair, error) {
	return list[*structs.KeyPair](s.ReadTxn(), ws, TableKeyPairs, "user", userID)
}
