package fsm

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Apart from UUIDs, the index keys are go-memdb's own, byte for byte.
func TestIndexKeysAreMemdbsStringAndCompoundKeys(t *testing.T) {
	values := []string{"", "a", "0B6F6D1C-4A8E-4A57-B1A9-1F3A7C1A2B3C", "0b6f6d1c-4a8e-4a57-b1a9-1f3a7c1a2b3", "req-1", "host\x00x", "ünïcode"}
	mine := sharedString(func(a *structs.InstanceAction) string { return a.InstanceID })
	theirs := &memdb.StringFieldIndex{Field: "InstanceID"}
	pair := &pairKey[*structs.InstanceAction]{
		first:  func(a *structs.InstanceAction) string { return a.InstanceID },
		second: func(a *structs.InstanceAction) string { return a.RequestID },
	}
	compound := &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.StringFieldIndex{Field: "InstanceID"}, &memdb.StringFieldIndex{Field: "RequestID"},
	}}
	for _, v := range values {
		obj := &structs.InstanceAction{InstanceID: v}
		same(t, "FromObject "+v)(mine.FromObject(obj))(theirs.FromObject(obj))
		sameArgs(t, "FromArgs "+v)(mine.FromArgs(v))(theirs.FromArgs(v))
		sameArgs(t, "PrefixFromArgs "+v)(mine.PrefixFromArgs(v))(theirs.PrefixFromArgs(v))
		for _, w := range values {
			obj := &structs.InstanceAction{InstanceID: v, RequestID: w}
			same(t, "pair FromObject "+v+"/"+w)(pair.FromObject(obj))(compound.FromObject(obj))
			sameArgs(t, "pair FromArgs "+v+"/"+w)(pair.FromArgs(v, w))(compound.FromArgs(v, w))
			sameArgs(t, "pair PrefixFromArgs "+v+"/"+w)(pair.PrefixFromArgs(v, w))(compound.PrefixFromArgs(v, w))
		}
		sameArgs(t, "pair PrefixFromArgs "+v)(pair.PrefixFromArgs(v))(compound.PrefixFromArgs(v))
	}
	if _, err := mine.FromArgs(3); err == nil {
		t.Error("a non-string argument was accepted")
	}
	if _, err := pair.FromArgs("a"); err == nil {
		t.Error("a lookup by one of two fields was accepted")
	}
	if _, _, err := mine.FromObject(&structs.Instance{}); err == nil {
		t.Error("an object of another type was accepted")
	}
}

// A UUID's key is its 16 bytes after a marker; keys stay distinct and
// prefix-free, and UUIDs keep their order.
func TestIndexKeysOfUUIDsAreShortDistinctAndOrdered(t *testing.T) {
	ids := []string{"\xfe", "\xff", "\xfeab", "a", "ab", "req-1", "0B6F6D1C-4A8E-4A57-B1A9-1F3A7C1A2B3C",
		strings.Repeat("\xfe", 17), "\xff\xfe" + strings.Repeat("a", 15)}
	for i := 0; i < 200; i++ {
		ids = append(ids, uuid.NewString())
	}
	ids = append(ids, "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff")
	idx := uniqueString(func(i *structs.Instance) string { return i.ID })
	keys := map[string]string{}
	for _, id := range ids {
		ok, k, err := idx.FromObject(&structs.Instance{ID: id})
		if !ok || err != nil {
			t.Fatalf("%q: %v %v", id, ok, err)
		}
		if isUUID(id) && len(k) != 17 {
			t.Errorf("%q: key of %d bytes, want 17", id, len(k))
		}
		if a, err := idx.FromArgs(id); err != nil || !bytes.Equal(a, k) {
			t.Errorf("%q: lookup key %q (%v), object key %q", id, a, err, k)
		}
		if prev, dup := keys[string(k)]; dup {
			t.Errorf("%q and %q have the same key", prev, id)
		}
		keys[string(k)] = id
	}
	for k1, id1 := range keys {
		for k2, id2 := range keys {
			if k1 != k2 && strings.HasPrefix(k2, k1) {
				t.Errorf("the key of %q is a prefix of the key of %q", id1, id2)
			}
		}
	}
	var uuids []string
	for _, id := range ids {
		if isUUID(id) {
			uuids = append(uuids, id)
		}
	}
	byKey := slices.Clone(uuids)
	slices.SortFunc(byKey, func(a, b string) int {
		ka, _ := idx.FromArgs(a)
		kb, _ := idx.FromArgs(b)
		return bytes.Compare(ka, kb)
	})
	slices.Sort(uuids)
	if !slices.Equal(byKey, uuids) {
		t.Error("UUIDs sorted by key are not in their order")
	}
}

// Lookups through the short keys: by id, by host, an instance's
// allocations and its actions, with UUID and other ids side by side.
func TestShortKeysServeLookups(t *testing.T) {
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	host := uuid.NewString()
	ids := []string{uuid.NewString(), "i-1", uuid.NewString()}
	for n, id := range ids {
		idx := uint64(10 + n)
		if err := s.UpsertInstance(idx, &structs.Instance{ID: id, Name: id, HostID: host}); err != nil {
			t.Fatal(err)
		}
		a := &structs.Allocation{ID: uuid.NewString(), InstanceID: id, HostID: host, DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending}
		if err := s.UpsertAllocation(idx, a); err != nil {
			t.Fatal(err)
		}
		for _, req := range []string{"req-" + id, uuid.NewString()} {
			if err := s.RecordInstanceAction(idx, &structs.InstanceActionRecordEntry{Action: &structs.InstanceAction{InstanceID: id, RequestID: req, Action: "create"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if insts, err := s.InstancesByHost(nil, host); err != nil || len(insts) != 3 {
		t.Fatalf("instances on the host: %d (%v)", len(insts), err)
	}
	for _, id := range ids {
		if inst, err := s.InstanceByID(nil, id); err != nil || inst == nil || inst.ID != id {
			t.Errorf("instance %q: %v (%v)", id, inst, err)
		}
		if allocs, err := s.AllocationsByInstance(nil, id); err != nil || len(allocs) != 1 || allocs[0].InstanceID != id {
			t.Errorf("allocations of %q: %v (%v)", id, allocs, err)
		}
		if acts, err := s.InstanceActions(nil, id); err != nil || len(acts) != 2 {
			t.Errorf("actions of %q: %d (%v)", id, len(acts), err)
		}
	}
	if allocs, err := s.AllocationsByHost(nil, host); err != nil || len(allocs) != 3 {
		t.Errorf("allocations on the host: %d (%v)", len(allocs), err)
	}
}

func same(t *testing.T, what string) func(bool, []byte, error) func(bool, []byte, error) {
	return func(ok1 bool, k1 []byte, err1 error) func(bool, []byte, error) {
		return func(ok2 bool, k2 []byte, err2 error) {
			t.Helper()
			if ok1 != ok2 || !bytes.Equal(k1, k2) || (err1 == nil) != (err2 == nil) {
				t.Errorf("%s: got %v %q %v, memdb %v %q %v", what, ok1, k1, err1, ok2, k2, err2)
			}
		}
	}
}

func sameArgs(t *testing.T, what string) func([]byte, error) func([]byte, error) {
	return func(k1 []byte, err1 error) func([]byte, error) {
		return func(k2 []byte, err2 error) {
			t.Helper()
			if !bytes.Equal(k1, k2) || (err1 == nil) != (err2 == nil) {
				t.Errorf("%s: got %q %v, memdb %q %v", what, k1, err1, k2, err2)
			}
		}
	}
}

// TestParseUUIDAgreesWithTheDefinition checks the table-driven parser
// against the definition (8-4-4-4-12 lowercase hex digits) on UUIDs and
// on every one-byte change of one.
func TestParseUUIDAgreesWithTheDefinition(t *testing.T) {
	want := func(v string) bool {
		if len(v) != 36 {
			return false
		}
		for i := 0; i < 36; i++ {
			c := v[i]
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if c != '-' {
					return false
				}
			} else if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	}
	id := uuid.NewString()
	u, ok := parseUUID(id)
	if !ok || u != uuid.MustParse(id) {
		t.Fatalf("%s: %x %v", id, u, ok)
	}
	for i := 0; i < len(id); i++ {
		for _, c := range []byte{'0', '9', 'a', 'f', 'g', 'A', 'F', '-', '/', ':', '`', 0, 0xFF} {
			v := id[:i] + string([]byte{c}) + id[i+1:]
			if _, ok := parseUUID(v); ok != want(v) {
				t.Errorf("%q: parsed %v, want %v", v, ok, want(v))
			}
		}
	}
}
