package fsm

import (
	"encoding/binary"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// The records of deleted instances are purged by a leader-driven entry
// (DeletedPurgeType) once they are older than the retention, the way an
// operator of Nova runs nova-manage db archive_deleted_rows --before and
// purge --before, but automatically and replicated. A deleted instance
// leaves behind, keyed by its id:
//
//   - its usage record (instance_usages), which dates the deletion;
//   - its instance actions and their events (instance_actions);
//   - its migrations (migrations);
//   - console tokens still naming it (console_tokens), normally gone
//     already with the next token purge.
//
// The purge removes those. Everything else keyed by an instance id is
// gone by the time the usage record exists or has its own retention:
// the instance row (and with it its metadata, tags, fault, password and
// system metadata) and its allocations and compute ports are removed
// when the instance is purged (purgeInstance); evaluations are reaped
// after the servers' eval_gc_threshold (eval_reap.go) and idempotency
// keys after their idempotency_key_ttl (create_requests.go); a server
// group's member list drops gone instances the next time the group is
// written; DHCP leases follow their ports and hosts' reports. A
// soft-deleted instance is still an instance (restorable) and is not
// touched.

// deletedIndex orders instance_usages by deletion time, so the purge
// and the leader's check read the oldest deletions first instead of
// walking every record.
const deletedIndex = "deleted"

func init() {
	registerApply(structs.DeletedPurgeType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.DeletedPurgeEntry
		if err := decodeBody(structs.DeletedPurgeType, body, &e); err != nil {
			return err
		}
		res, err := s.PurgeDeleted(index, e.Before, e.Limit)
		if err != nil {
			return err
		}
		return res
	})
}

// deletedAtIndexer indexes a usage record by DeletedAt as a big-endian
// number with its sign bit flipped, so the radix tree iterates in time
// order (memdb's IntFieldIndex is varint-encoded, which does not).
type deletedAtIndexer struct{}

// FromObject implements memdb.SingleIndexer.
func (deletedAtIndexer) FromObject(obj any) (bool, []byte, error) {
	u, ok := obj.(*structs.InstanceUsage)
	if !ok {
		return false, nil, fmt.Errorf("deleted index: %T is not an instance usage", obj)
	}
	return true, orderedInt64(u.DeletedAt), nil
}

// FromArgs implements memdb.Indexer: no argument is every record, in
// order; one int64 is the records deleted at that time.
func (deletedAtIndexer) FromArgs(args ...any) ([]byte, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		v, ok := args[0].(int64)
		if !ok {
			return nil, fmt.Errorf("deleted index: argument %T is not an int64", args[0])
		}
		return orderedInt64(v), nil
	}
	return nil, fmt.Errorf("deleted index: want at most one argument, got %d", len(args))
}

func orderedInt64(v int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(v)^(1<<63))
	return b
}

// OldestDeleted returns when the earliest-deleted instance whose records
// are still kept was deleted, and false when there is none; the leader
// asks before it proposes a purge, so an idle cluster writes nothing.
func (s *StateStore) OldestDeleted() (int64, bool, error) {
	u, err := first[*structs.InstanceUsage](s.ReadTxn(), nil, TableInstanceUsages, deletedIndex)
	if err != nil || u == nil {
		return 0, false, err
	}
	return u.DeletedAt, true, nil
}

// PurgeDeleted removes every record of the instances deleted before
// before (unix nanoseconds), at most limit of them (structs.
// DeletedPurgeMaxBatch when limit is not in 1..DeletedPurgeMaxBatch),
// earliest deletion first and, at the same time, by instance id. It
// reads nothing but the state and the arguments, so every replica
// removes the same records; applied again it finds nothing and changes
// nothing, not even an index.
func (s *StateStore) PurgeDeleted(index uint64, before int64, limit int) (*structs.DeletedPurgeResult, error) {
	if limit <= 0 || limit > structs.DeletedPurgeMaxBatch {
		limit = structs.DeletedPurgeMaxBatch
	}
	txn := s.writeTxn()
	defer txn.Abort()
	victims, more, err := deletedBefore(txn, before, limit)
	if err != nil || len(victims) == 0 {
		return &structs.DeletedPurgeResult{}, err
	}
	changed := map[string]bool{TableInstanceUsages: true}
	for _, u := range victims {
		if err := purgeDeletedRecords(txn, u, changed); err != nil {
			return nil, err
		}
	}
	tables := make([]string, 0, len(changed))
	for _, t := range []string{TableInstanceUsages, TableInstanceActions, TableMigrations, TableConsoleTokens} {
		if changed[t] {
			tables = append(tables, t)
		}
	}
	if err := commitAt(txn, index, tables...); err != nil {
		return nil, err
	}
	return &structs.DeletedPurgeResult{Purged: len(victims), More: more}, nil
}

// deletedBefore lists up to limit usage records of instances deleted
// before before, oldest first, and whether there are more. It reads them
// all before anything is deleted: memdb iterators must not see their
// own transaction's writes.
func deletedBefore(txn *memdb.Txn, before int64, limit int) ([]*structs.InstanceUsage, bool, error) {
	it, err := txn.Get(TableInstanceUsages, deletedIndex)
	if err != nil {
		return nil, false, fmt.Errorf("instance usages by deletion: %w", err)
	}
	var out []*structs.InstanceUsage
	for raw := it.Next(); raw != nil; raw = it.Next() {
		u := raw.(*structs.InstanceUsage)
		if u.DeletedAt >= before {
			return out, false, nil
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, u)
	}
	return out, false, nil
}

// purgeDeletedRecords removes a deleted instance's usage record and what
// is still keyed by its id, and marks the tables it changed. An instance
// of that id that exists again (which UUIDs make all but impossible)
// keeps its actions, migrations and tokens.
func purgeDeletedRecords(txn *memdb.Txn, u *structs.InstanceUsage, changed map[string]bool) error {
	if err := txn.Delete(TableInstanceUsages, u); err != nil {
		return fmt.Errorf("purge usage of %s: %w", u.InstanceID, err)
	}
	live, err := txn.First(TableInstances, "id", u.InstanceID)
	if err != nil {
		return fmt.Errorf("instance lookup %s: %w", u.InstanceID, err)
	}
	if live != nil {
		return nil
	}
	for _, d := range []struct {
		table string
		args  []any
	}{
		{TableInstanceActions, []any{"id_prefix", u.InstanceID, ""}},
		{TableMigrations, []any{"instance", u.InstanceID}},
		{TableConsoleTokens, []any{"instance", u.InstanceID}},
	} {
		n, err := txn.DeleteAll(d.table, d.args[0].(string), d.args[1:]...)
		if err != nil {
			return fmt.Errorf("purge %s of %s: %w", d.table, u.InstanceID, err)
		}
		if n > 0 {
			changed[d.table] = true
		}
	}
	return nil
}
