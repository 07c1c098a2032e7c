package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableConsoleTokens is the name of the console token table, for Index
// and blocking queries.
const TableConsoleTokens = "console_tokens"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableConsoleTokens,
			Indexes: map[string]*memdb.IndexSchema{
				"id":       idIndex("TokenHash"),
				"instance": {Name: "instance", Indexer: &memdb.StringFieldIndex{Field: "InstanceID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ConsoleTokenSnapshot,
		table:      TableConsoleTokens,
		newRecord:  func() any { return new(structs.ConsoleAuthToken) },
	})
	registerApply(structs.ConsoleTokenCreateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ConsoleTokenCreateEntry
		if err := decodeBody(structs.ConsoleTokenCreateType, body, &e); err != nil {
			return err
		}
		return s.CreateConsoleToken(index, e.Token)
	})
	registerApply(structs.ConsoleTokenConsumeType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ConsoleTokenConsumeEntry
		if err := decodeBody(structs.ConsoleTokenConsumeType, body, &e); err != nil {
			return err
		}
		if e.Purge {
			return s.PurgeConsoleTokens(index, e.Now)
		}
		tok, err := s.ConsumeConsoleToken(index, &e)
		if err != nil {
			return err
		}
		return tok
	})
}

// errConsoleToken is the one answer for a token that is unknown, used,
// expired, of another type or host: a caller learns nothing more.
func errConsoleToken() error {
	return structs.Errorf(structs.KindNotFound, "console token is invalid or has expired")
}

// CreateConsoleToken stores a token for a console of an instance on its
// current host.
func (s *StateStore) CreateConsoleToken(index uint64, tok *structs.ConsoleAuthToken) error {
	if tok == nil {
		return structs.Errorf(structs.KindInvalid, "console token entry without a token")
	}
	if err := tok.Validate(); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", tok.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil {
		return structs.Errorf(structs.KindNotFound, "instance %s not found", tok.InstanceID)
	}
	if inst.HostID != tok.HostID {
		return structs.Errorf(structs.KindConflict, "instance %s is not on host %s", tok.InstanceID, tok.HostID)
	}
	existing, err := txn.First(TableConsoleTokens, "id", tok.TokenHash)
	if err != nil {
		return fmt.Errorf("console token lookup: %w", err)
	}
	if existing != nil {
		return structs.Errorf(structs.KindConflict, "console token already exists")
	}
	c := tok.Copy()
	c.CreateIndex, c.ModifyIndex = index, index
	if err := txn.Insert(TableConsoleTokens, c); err != nil {
		return fmt.Errorf("insert console token: %w", err)
	}
	return commitAt(txn, index, TableConsoleTokens)
}

// ConsumeConsoleToken removes a valid token and returns it: it must
// exist, not be expired at e.Now, match e's type and host when given,
// and its instance must still be on the token's host. An invalid token
// changes nothing.
func (s *StateStore) ConsumeConsoleToken(index uint64, e *structs.ConsoleTokenConsumeEntry) (*structs.ConsoleAuthToken, error) {
	txn := s.writeTxn()
	defer txn.Abort()
	tok, err := first[*structs.ConsoleAuthToken](txn, nil, TableConsoleTokens, "id", e.TokenHash)
	if err != nil {
		return nil, err
	}
	if tok == nil || tok.Expired(e.Now) ||
		(e.ConsoleType != "" && e.ConsoleType != tok.ConsoleType) ||
		(e.HostID != "" && e.HostID != tok.HostID) {
		return nil, errConsoleToken()
	}
	inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", tok.InstanceID)
	if err != nil {
		return nil, err
	}
	if inst == nil || inst.HostID != tok.HostID {
		return nil, errConsoleToken()
	}
	if err := txn.Delete(TableConsoleTokens, tok); err != nil {
		return nil, fmt.Errorf("delete console token: %w", err)
	}
	if err := commitAt(txn, index, TableConsoleTokens); err != nil {
		return nil, err
	}
	return tok.Copy(), nil
}

// PurgeConsoleTokens removes every token expired at now and every token
// whose instance is gone or moved off the token's host.
func (s *StateStore) PurgeConsoleTokens(index uint64, now int64) error {
	txn := s.writeTxn()
	defer txn.Abort()
	toks, err := list[*structs.ConsoleAuthToken](txn, nil, TableConsoleTokens)
	if err != nil {
		return err
	}
	for _, tok := range toks {
		stale := tok.Expired(now)
		if !stale {
			inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", tok.InstanceID)
			if err != nil {
				return err
			}
			stale = inst == nil || inst.HostID != tok.HostID
		}
		if stale {
			if err := txn.Delete(TableConsoleTokens, tok); err != nil {
				return fmt.Errorf("delete console token: %w", err)
			}
		}
	}
	return commitAt(txn, index, TableConsoleTokens)
}

// ConsoleToken returns a token by its hash, or nil.
func (s *StateStore) ConsoleToken(ws memdb.WatchSet, hash string) (*structs.ConsoleAuthToken, error) {
	return first[*structs.ConsoleAuthToken](s.ReadTxn(), ws, TableConsoleTokens, "id", hash)
}

// ConsoleTokens lists every stored token.
func (s *StateStore) ConsoleTokens(ws memdb.WatchSet) ([]*structs.ConsoleAuthToken, error) {
	return list[*structs.ConsoleAuthToken](s.ReadTxn(), ws, TableConsoleTokens)
}
