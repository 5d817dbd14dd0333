package toolkit

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
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
	fields := hashFieldsOf(rv.Type())
	out := make(map[string]any, len(fields)+4) // room for a caller's extra keys
	for _, f := range fields {
		out[f.name] = rv.Field(f.index).Interface()
	}
	return out, nil
}

// hashField is one field HashView takes: its index and JSON name.
type hashField struct {
	index int
	name  string
}

// hashFields caches each struct type's hashField list: reading the tags
// of every field on every call was half of an evidence row's content hash
// (docs/performance.md#the-tool-pipeline).
var hashFields sync.Map // reflect.Type → []hashField

func hashFieldsOf(rt reflect.Type) []hashField {
	if f, ok := hashFields.Load(rt); ok {
		return f.([]hashField)
	}
	var fields []hashField
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
		fields = append(fields, hashField{index: i, name: name})
	}
	hashFields.Store(rt, fields)
	return fields
}
