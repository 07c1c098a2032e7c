package fsm

import (
	"fmt"
	"reflect"
	"sync"
)

// checkNoNilElements refuses a decoded entry body holding a nil where a
// list element or map value must be an object (a msgpack nil in
// PlanApplyEntry.Evals, say): no server writes one, and the handlers
// dereference every element. Free-form values (any) may be nil.
//
// It runs on every entry every server applies, so it is cheap: whether a
// type can hold such an element at all is worked out once per type and
// cached (strings, numbers and maps of strings are never visited), and
// the path that names the nil is built only when there is one.
func checkNoNilElements(v reflect.Value, path string) error {
	p := findNil(v)
	if p == nil {
		return nil
	}
	return fmt.Errorf("%s is nil", path+p.String())
}

// nilPath is the path from an entry to a nil element, innermost last.
type nilPath struct {
	step string
	next *nilPath
}

func (p *nilPath) String() string {
	s := ""
	for ; p != nil; p = p.next {
		s += p.step
	}
	return s
}

// findNil returns the path to a nil element in v, or nil if there is
// none.
func findNil(v reflect.Value) *nilPath {
	if !mayHoldNil(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return findNil(v.Elem())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || !mayHoldNil(f.Type) {
				continue
			}
			if p := findNil(v.Field(i)); p != nil {
				return &nilPath{step: "." + f.Name, next: p}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			el := v.Index(i)
			if el.Kind() == reflect.Pointer && el.IsNil() {
				return &nilPath{step: fmt.Sprintf("[%d]", i)}
			}
			if p := findNil(el); p != nil {
				return &nilPath{step: fmt.Sprintf("[%d]", i), next: p}
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			el := iter.Value()
			if el.Kind() == reflect.Pointer && el.IsNil() {
				return &nilPath{step: fmt.Sprintf("[%v]", iter.Key())}
			}
			if p := findNil(el); p != nil {
				return &nilPath{step: fmt.Sprintf("[%v]", iter.Key()), next: p}
			}
		}
	}
	return nil
}

// holdsNil caches mayHoldNil per type.
var holdsNil sync.Map // reflect.Type → bool

// mayHoldNil reports whether a value of type t can contain, through
// pointers, exported struct fields, lists and maps, a list element or
// map value that is a nil pointer. The answer depends on the type only,
// so it is the same on every server.
func mayHoldNil(t reflect.Type) bool {
	if v, ok := holdsNil.Load(t); ok {
		return v.(bool)
	}
	return computeHoldsNil(t, map[reflect.Type]bool{})
}

// computeHoldsNil works mayHoldNil out; a type met again while its own
// answer is being worked out (a recursive type) counts as holding one,
// which only means it is visited.
func computeHoldsNil(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if v, ok := holdsNil.Load(t); ok {
		return v.(bool)
	}
	if visiting[t] {
		return true
	}
	visiting[t] = true
	defer delete(visiting, t)
	var holds bool
	switch t.Kind() {
	case reflect.Pointer:
		holds = computeHoldsNil(t.Elem(), visiting)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && computeHoldsNil(f.Type, visiting) {
				holds = true
				break
			}
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		el := t.Elem()
		switch {
		case t.Kind() != reflect.Map && el.Kind() == reflect.Uint8:
			holds = false
		case el.Kind() == reflect.Pointer:
			holds = true
		default:
			holds = computeHoldsNil(el, visiting)
		}
	}
	holdsNil.Store(t, holds)
	return holds
}
