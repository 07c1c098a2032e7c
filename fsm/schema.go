package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// tableIndex is the table recording, per table, the last Raft index that
// changed it; blocking queries and QueryMeta.Index read it.
const tableIndex = "index"

// schemaFactories are registered by each resource file beside its
// transactions, so adding a resource never touches a central list.
var schemaFactories []func() *memdb.TableSchema

func registerSchema(f func() *memdb.TableSchema) {
	schemaFactories = append(schemaFactories, f)
}

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: tableIndex,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			},
		}
	})
}

// dbSchema assembles every registered table.
func dbSchema() (*memdb.DBSchema, error) {
	s := &memdb.DBSchema{Tables: make(map[string]*memdb.TableSchema)}
	for _, f := range schemaFactories {
		t := f()
		if _, dup := s.Tables[t.Name]; dup {
			return nil, fmt.Errorf("table %q registered twice", t.Name)
		}
		s.Tables[t.Name] = t
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("state schema: %w", err)
	}
	return s, nil
}

// idIndex is the usual unique string primary key on the field named.
func idIndex(field string) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: field}}
}
