package toolkit

import (
	"fmt"
	"reflect"
	"strings"
)

// HashView is the content of struct v that a hash covers: every exported
// field under its JSON name, empty values included (omitempty is ignored, so
// a hash never depends on how a value is spelled when empty), except the
// fields tagged `hash:"-"`. One struct definition with its exclusions marked
// replaces a hand-kept copy of the hashed fields: a field added to the
// struct is hashed unless someone decides otherwise, in the open.
func HashView(v any) (map[string]any, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("hash view of %T: not a struct", v)
	}
	rt := rv.Type()
	out := make(map[string]any, rt.NumField())
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if !f.IsExported() || f.Tag.Get("hash") == "-" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = rv.Field(i).Interface()
	}
	return out, nil
}
