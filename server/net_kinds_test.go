package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// Every networking kind has one complete entry in netKinds: a kind
// missing a function would panic on its first request.
func TestNetKindsCoverEveryKind(t *testing.T) {
	if len(netKinds) != len(structs.NetKinds) {
		t.Fatalf("netKinds has %d kinds, structs.NetKinds %d", len(netKinds), len(structs.NetKinds))
	}
	for _, kind := range structs.NetKinds {
		k, ok := netKinds[kind]
		if !ok {
			t.Fatalf("kind %q has no entry", kind)
		}
		if k.create == nil || k.update == nil || k.delete == nil || k.visible == nil || k.fill == nil || k.fields == nil {
			t.Errorf("kind %q: an entry function is missing", kind)
		}
	}
	if _, err := lookupNetKind("bogus"); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("unknown kind: got %v", err)
	}
}
