package fsm

import (
	"fmt"
	"reflect"
)

// checkNoNilElements refuses a decoded entry body holding a nil where a
// list element or map value must be an object (a msgpack nil in
// PlanApplyEntry.Evals, say): no server writes one, and the handlers
// dereference every element. Free-form values (any) may be nil.
func checkNoNilElements(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkNoNilElements(v.Elem(), path)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				if err := checkNoNilElements(v.Field(i), path+"."+t.Field(i).Name); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		for i := range v.Len() {
			el := v.Index(i)
			if el.Kind() == reflect.Pointer && el.IsNil() {
				return fmt.Errorf("%s[%d] is nil", path, i)
			}
			if err := checkNoNilElements(el, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			el := iter.Value()
			if el.Kind() == reflect.Pointer && el.IsNil() {
				return fmt.Errorf("%s[%v] is nil", path, iter.Key())
			}
			if err := checkNoNilElements(el, fmt.Sprintf("%s[%v]", path, iter.Key())); err != nil {
				return err
			}
		}
	}
	return nil
}
