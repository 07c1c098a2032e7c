package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// first reads one object of type T by index, registering the watch.
func first[T any](txn *memdb.Txn, ws memdb.WatchSet, table, index string, args ...any) (T, error) {
	var zero T
	watchCh, raw, err := txn.FirstWatch(table, index, args...)
	if err != nil {
		return zero, fmt.Errorf("%s lookup by %s: %w", table, index, err)
	}
	if ws != nil {
		ws.Add(watchCh)
	}
	if raw == nil {
		return zero, nil
	}
	return raw.(T), nil
}

// list reads every object of a table (or those matching index args),
// registering the watch.
func list[T any](txn *memdb.Txn, ws memdb.WatchSet, table string, indexArgs ...any) ([]T, error) {
	index := "id"
	var args []any
	if len(indexArgs) > 0 {
		index = indexArgs[0].(string)
		args = indexArgs[1:]
	}
	it, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", table, err)
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []T
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(T))
	}
	return out, nil
}

// upsert inserts obj into table at index, keeping the CreateIndex of the
// object it replaces. key is obj's primary id (several values for a
// compound id); stamp sets the indexes.
func upsert(txn *memdb.Txn, table string, index uint64, obj any, stamp func(create, modify uint64), existingCreate func(any) uint64, key ...any) error {
	existing, err := txn.First(table, "id", key...)
	if err != nil {
		return fmt.Errorf("%s lookup %v: %w", table, key, err)
	}
	create := index
	if existing != nil {
		create = existingCreate(existing)
	}
	stamp(create, index)
	if err := txn.Insert(table, obj); err != nil {
		return fmt.Errorf("insert %s %v: %w", table, key, err)
	}
	return nil
}

// deleteByID removes one object by primary id; missing is not-found.
func deleteByID(txn *memdb.Txn, table, what string, args ...any) error {
	existing, err := txn.First(table, "id", args...)
	if err != nil {
		return fmt.Errorf("%s lookup: %w", table, err)
	}
	if existing == nil {
		return structs.Errorf(structs.KindNotFound, "%s %s not found", what, keyString(args))
	}
	if err := txn.Delete(table, existing); err != nil {
		return fmt.Errorf("delete %s %v: %w", what, args, err)
	}
	return nil
}

// commitAt stamps table's index and commits the transaction.
func commitAt(txn *memdb.Txn, index uint64, tables ...string) error {
	for _, t := range tables {
		if err := setIndex(txn, t, index); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

// keyString renders a (possibly compound) key for messages: "7" or "u1/web".
func keyString(args []any) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += "/"
		}
		s += fmt.Sprintf("%q", fmt.Sprint(a))
	}
	return s
}

// upsertOne is upsert in a transaction of its own.
func (s *StateStore) upsertOne(index uint64, table string, obj any, stamp func(create, modify uint64), existingCreate func(any) uint64, key ...any) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if err := upsert(txn, table, index, obj, stamp, existingCreate, key...); err != nil {
		return err
	}
	return commitAt(txn, index, table)
}

// deleteOne is deleteByID in a transaction of its own.
func (s *StateStore) deleteOne(index uint64, table, what string, key ...any) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if err := deleteByID(txn, table, what, key...); err != nil {
		return err
	}
	return commitAt(txn, index, table)
}
