package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// Every networking kind has one complete entry in netKinds, on a table
// the schema has, whose scope is one of the table's indexes.
func TestNetKindsCoverEveryKind(t *testing.T) {
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	schema := s.db.DBSchema()
	if len(netKinds) != len(structs.NetKinds) {
		t.Fatalf("netKinds has %d kinds, structs.NetKinds %d", len(netKinds), len(structs.NetKinds))
	}
	for _, kind := range structs.NetKinds {
		k, ok := netKinds[kind]
		if !ok {
			t.Fatalf("kind %q has no entry", kind)
		}
		if k.apply == nil || k.createKey == nil {
			t.Errorf("kind %q: apply or createKey missing", kind)
		}
		table, ok := schema.Tables[k.table]
		if !ok {
			t.Fatalf("kind %q: no table %q", kind, k.table)
		}
		if _, ok := table.Indexes[k.scope]; !ok {
			t.Errorf("kind %q: table %q has no index %q", kind, k.table, k.scope)
		}
	}
	if _, err := s.NetObject(nil, "bogus", "x"); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("unknown kind: got %v", err)
	}
}
