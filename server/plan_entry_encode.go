package server

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/stratus-cloud/stratus/structs"
)

// Compact Raft entries. structs.EncodeEntry writes every field of every
// struct, by name, zero or not: a placed instance's allocation carries a
// dozen empty fields (its agent's state, pending actions, indexes) and a
// new instance about forty, so half of a plan's or a multi-create's
// entry was names of fields with nothing in them — written to three
// logs, replicated twice and decoded by every server.
//
// encodeCompactEntry writes the same entry without the zero-valued
// fields of the structs package's types. msgpack decodes a struct from
// a map by field name, and a field its map does not name stays zero, so
// every server, of this release or an older one, decodes exactly what
// EncodeEntry's bytes give (TestCompactEntryDecodesAsTheFullOne).
// Empty but non-nil lists and maps are kept: they decode as empty, not
// as nil (unless tagged omitempty, which msgpack leaves out when empty).
// A struct the rewrite does not understand (one that embeds another, or
// has an encoding of its own) is written whole, as EncodeEntry does.

// fieldList is a struct written as a msgpack map: its names and
// values alternate, in field order (msgpack's MapBySlice).
type fieldList []any

// MapBySlice makes the msgpack encoder write the list as a map.
func (fieldList) MapBySlice() {}

// encodeCompactEntry is structs.EncodeEntry without zero-valued fields.
func encodeCompactEntry(t structs.MessageType, body any) ([]byte, error) {
	return structs.EncodeEntry(t, compactValue(reflect.ValueOf(body)))
}

// applyCompact is Server.apply with a compact entry.
func (s *Server) applyCompact(t structs.MessageType, body any) (uint64, error) {
	return s.applyEncoded(encodeCompactEntry, t, body)
}

var structsPkg = reflect.TypeOf(structs.Plan{}).PkgPath()

// compactValue returns what to encode in v's place: v itself unless it
// is, or holds in a list or a map, a struct of the structs package.
func compactValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	if !holdsCompactable(t) {
		return v.Interface()
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v.Interface()
		}
		return compactValue(v.Elem())
	case reflect.Struct:
		return compactStruct(v)
	case reflect.Slice:
		if v.IsNil() {
			return v.Interface()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = compactValue(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v.Interface()
		}
		out := reflect.MakeMapWithSize(reflect.MapOf(t.Key(), anyType), v.Len())
		for it := v.MapRange(); it.Next(); {
			val := compactValue(it.Value())
			rv := reflect.New(anyType).Elem()
			if val != nil {
				rv.Set(reflect.ValueOf(val))
			}
			out.SetMapIndex(it.Key(), rv)
		}
		return out.Interface()
	}
	return v.Interface()
}

var anyType = reflect.TypeOf((*any)(nil)).Elem()

// compactStruct writes a struct's exported, encoded, non-zero fields.
func compactStruct(v reflect.Value) any {
	fields := structFields(v.Type())
	if fields == nil {
		return v.Interface()
	}
	out := make(fieldList, 0, 2*len(fields))
	for _, f := range fields {
		fv := v.Field(f.index)
		if fv.IsZero() || (f.omitEmpty && emptyValue(fv)) {
			continue
		}
		out = append(out, f.name, compactValue(fv))
	}
	return out
}

// compactField is one field a struct is encoded with.
type compactField struct {
	name  string
	index int
	// omitEmpty: tagged omitempty, so not written when empty (an empty
	// list decodes as nil).
	omitEmpty bool
}

// emptyValue is msgpack's omitempty test beyond the zero value: an
// empty list, map or string.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return v.Len() == 0
	}
	return false
}

// fieldCache holds each struct type's encoded fields (nil: write the
// struct whole).
var fieldCache sync.Map // reflect.Type → []compactField

// structFields lists the fields msgpack encodes for t, by the names it
// uses: exported, not tagged "-", named as their codec or json tag
// names them. It returns nil for a struct that embeds another (msgpack
// flattens those) or encodes itself: such a struct is written whole.
func structFields(t reflect.Type) []compactField {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]compactField)
	}
	if encodesItself(t) {
		fieldCache.Store(t, []compactField(nil))
		return nil
	}
	fields := make([]compactField, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			fields = nil
			break
		}
		if !f.IsExported() {
			continue
		}
		name, omitEmpty, skip := codecName(f)
		if skip {
			continue
		}
		fields = append(fields, compactField{name: name, index: i, omitEmpty: omitEmpty})
	}
	fieldCache.Store(t, fields)
	return fields
}

// selfEncoders are the interfaces through which a type can encode
// itself rather than field by field.
var selfEncoders = []reflect.Type{
	reflect.TypeOf((*codec.Selfer)(nil)).Elem(),
	reflect.TypeOf((*encoding.BinaryMarshaler)(nil)).Elem(),
	reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem(),
	reflect.TypeOf((*json.Marshaler)(nil)).Elem(),
}

// encodesItself reports whether t (or *t) has an encoding of its own:
// such a struct is written whole.
func encodesItself(t reflect.Type) bool {
	for _, i := range selfEncoders {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// codecName is the name msgpack encodes f under, as go-msgpack reads
// the "codec" tag, else the "json" tag, and whether it is omitempty;
// skip says the field is not encoded at all.
func codecName(f reflect.StructField) (name string, omitEmpty, skip bool) {
	for _, key := range []string{"codec", "json"} {
		tag, ok := f.Tag.Lookup(key)
		if !ok {
			continue
		}
		if tag == "-" {
			return "", false, true
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			omitEmpty = omitEmpty || o == "omitempty"
		}
		if name == "" {
			name = f.Name
		}
		return name, omitEmpty, false
	}
	return f.Name, false, false
}

// compactable caches holdsCompactable per type.
var compactable sync.Map // reflect.Type → bool

// holdsCompactable reports whether a value of type t is, or can hold
// in pointers, lists and maps, a struct of the structs package.
func holdsCompactable(t reflect.Type) bool {
	if c, ok := compactable.Load(t); ok {
		return c.(bool)
	}
	var c bool
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		c = holdsCompactable(t.Elem())
	case reflect.Struct:
		c = t.PkgPath() == structsPkg
	}
	compactable.Store(t, c)
	return c
}
