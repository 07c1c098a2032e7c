package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// Index keys of the tables that grow with every instance (instances,
// allocations, instance actions, evaluations). Each key is made in one
// allocation of its final size, without reflection: go-memdb's
// StringFieldIndex builds a key as a string, then copies it into a
// slice, and a non-unique index's key was then copied again to append
// the primary key. Every lookup and every write makes these keys, so
// they were a large share of the apply path's garbage, and garbage of
// the very size classes the radix trees' live leaves are in.
//
// A value in the canonical form of a UUID (36 characters, lowercase
// hex) is keyed by its 16 bytes after a 0xFE marker: 17 bytes instead
// of 37, in every index entry that holds it (an instance's entries hold
// its id and its host's, an allocation's three ids each). Any other
// value is keyed as StringFieldIndex keys it, the string and a NUL,
// with a 0xFF escape before a string that starts with 0xFE or 0xFF, so
// that keys stay distinct and prefix-free (a non-unique key is its
// value's key followed by the primary key). Sorted by key, UUIDs keep
// their order among themselves, and other strings theirs, but every
// UUID sorts after every other string. A prefix query (PrefixFromArgs)
// matches whole values only for UUIDs: no query of these tables looks
// for part of an id.

// primaryKeyRoom is the spare capacity a non-unique index's key leaves
// for the primary key go-memdb appends to it: a UUID's key. (A longer
// primary key is appended all the same, into a new slice.)
const primaryKeyRoom = 17

// stringKey indexes the string field get returns.
type stringKey[T any] struct {
	get func(T) string
	// room is spare capacity at the end of each key built from an
	// object (primaryKeyRoom for a non-unique index).
	room int
}

// uniqueString is a unique index on the string field get returns.
func uniqueString[T any](get func(T) string) *stringKey[T] {
	return &stringKey[T]{get: get}
}

// sharedString is a non-unique index on the string field get returns.
func sharedString[T any](get func(T) string) *stringKey[T] {
	return &stringKey[T]{get: get, room: primaryKeyRoom}
}

// FromObject is the object's key; missing when the field is empty.
func (x *stringKey[T]) FromObject(obj any) (bool, []byte, error) {
	o, ok := obj.(T)
	if !ok {
		return false, nil, fmt.Errorf("index key: %T is not a %T", obj, *new(T))
	}
	v := x.get(o)
	if v == "" {
		return false, nil, nil
	}
	return true, appendKey(make([]byte, 0, keyLen(v, true)+x.room), v, true), nil
}

// FromArgs is the key of a lookup by one string.
func (x *stringKey[T]) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("must provide only a single argument")
	}
	return argsKey(args, true)
}

// PrefixFromArgs is the key of a prefix lookup: a UUID's whole key, or
// another string's key without its NUL.
func (x *stringKey[T]) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("must provide only a single argument")
	}
	return argsKey(args, false)
}

// argsKey is the key of lookup arguments, each a string; the last one
// is a prefix (without its NUL) unless whole is set.
func argsKey(args []any, whole bool) ([]byte, error) {
	n := 0
	for i, arg := range args {
		s, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("argument %d must be a string: %#v", i, arg)
		}
		n += keyLen(s, true)
	}
	k := make([]byte, 0, n)
	for i, arg := range args {
		k = appendKey(k, arg.(string), whole || i+1 < len(args))
	}
	return k, nil
}

// uuidKeyMarker starts the key of a UUID; escapeKeyMarker starts the key
// of a string whose first byte is one of the two markers.
const (
	uuidKeyMarker   = 0xFE
	escapeKeyMarker = 0xFF
)

// keyLen is the length of v's key (with its NUL when terminated).
func keyLen(v string, terminated bool) int {
	if isUUID(v) {
		return 17
	}
	n := len(v)
	if terminated {
		n++
	}
	if n > 0 && len(v) > 0 && v[0] >= uuidKeyMarker {
		n++
	}
	return n
}

// appendKey appends v's key to k: a UUID's marker and 16 bytes, or the
// string (escaped) and, when terminated, a NUL.
func appendKey(k []byte, v string, terminated bool) []byte {
	if u, ok := parseUUID(v); ok {
		k = append(k, uuidKeyMarker)
		return append(k, u[:]...)
	}
	if len(v) > 0 && v[0] >= uuidKeyMarker {
		k = append(k, escapeKeyMarker)
	}
	k = append(k, v...)
	if terminated {
		k = append(k, 0)
	}
	return k
}

// isUUID reports whether v is a UUID in canonical form: 8-4-4-4-12
// lowercase hex digits.
func isUUID(v string) bool {
	_, ok := parseUUID(v)
	return ok
}

// parseUUID is the 16 bytes of v when v is a UUID in canonical form.
// Every index write and lookup keys a few ids, so this is a hot path:
// one pass, a table lookup per digit, no branch per position.
func parseUUID(v string) (u [16]byte, ok bool) {
	if len(v) != 36 || v[8] != '-' || v[13] != '-' || v[18] != '-' || v[23] != '-' {
		return u, false
	}
	var bad byte
	for i, at := range uuidDigitAt {
		hi, lo := hexDigit[v[at]], hexDigit[v[at+1]]
		bad |= hi | lo
		u[i] = hi<<4 | lo&0x0F
	}
	return u, bad&0xF0 == 0
}

// uuidDigitAt is where each byte's two digits start in a canonical UUID.
var uuidDigitAt = [16]byte{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexDigit is the value of each lowercase hex digit, 0xFF for every
// other byte.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// pairKey is a unique index on two string fields, as a CompoundIndex of
// two StringFieldIndexes (neither may be empty).
type pairKey[T any] struct {
	first, second func(T) string
}

// FromObject is the object's key: both fields' keys.
func (x *pairKey[T]) FromObject(obj any) (bool, []byte, error) {
	o, ok := obj.(T)
	if !ok {
		return false, nil, fmt.Errorf("index key: %T is not a %T", obj, *new(T))
	}
	a, b := x.first(o), x.second(o)
	if a == "" || b == "" {
		return false, nil, nil
	}
	k := make([]byte, 0, keyLen(a, true)+keyLen(b, true))
	return true, appendKey(appendKey(k, a, true), b, true), nil
}

// FromArgs is the key of a lookup by both strings.
func (x *pairKey[T]) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("non-equivalent argument count and index fields: %d", len(args))
	}
	return argsKey(args, true)
}

// PrefixFromArgs is the key of a prefix lookup: the first string whole,
// the second (when given) as a prefix, as CompoundIndex makes it.
func (x *pairKey[T]) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) > 2 {
		return nil, fmt.Errorf("non-equivalent argument count and index fields: %d", len(args))
	}
	return argsKey(args, false)
}

// Interface checks: memdb takes these as its indexers.
var (
	_ memdb.SingleIndexer = (*stringKey[any])(nil)
	_ memdb.PrefixIndexer = (*stringKey[any])(nil)
	_ memdb.SingleIndexer = (*pairKey[any])(nil)
	_ memdb.PrefixIndexer = (*pairKey[any])(nil)
)
