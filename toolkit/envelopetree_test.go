package toolkit

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// requestTree is the envelope as json.Marshal and decodeJSON give it, for
// requests with every field (found by reflection, so a field added to
// Request is covered) empty or set, and the schema's verdict on the two is
// the same.
func TestRequestTreeIsMarshalledRequest(t *testing.T) {
	values := []string{"", "x", "user", "agent", "corr-0123456789abcdef", "de-DE", "EUR", "web", "a\"b\\c<>&\u2028",
		"\x00\x1f", "é€\U0001F600", "\xff", "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"}
	env, err := BuiltinSchemas().Schema(envelopeSchema)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 8))
	for i := range 5000 {
		var req Request
		fill(rng, reflect.ValueOf(&req).Elem(), values, i < 2)
		raw, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := requestTree(req)
		if !ok {
			continue // json.Marshal rewrites a string; checkRequest marshals
		}
		if !reflect.DeepEqual(any(got), want) {
			t.Fatalf("%+v:\n tree      %#v\n marshalled %#v", req, got, want)
		}
		gotP, gotErr := validateTree(env, got)
		_, wantP, wantErr := validate(env, raw)
		if !reflect.DeepEqual(gotP, wantP) || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%+v: schema says %v (%v) of the tree, %v (%v) of the JSON", req, gotP, gotErr, wantP, wantErr)
		}
	}
	if _, ok := requestTree(Request{RequestID: "\xff"}); ok {
		t.Fatal("a string json.Marshal rewrites is taken as it is")
	}
}

// fill sets every string and bool of v at random (all of them set when
// full).
func fill(rng *rand.Rand, v reflect.Value, values []string, full bool) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rng, v.Field(i), values, full)
		}
	case reflect.String:
		s := values[rng.IntN(len(values))]
		if full && s == "" {
			s = "x"
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(full || rng.IntN(2) == 0)
	default:
		panic("Request has a field of kind " + v.Kind().String() + ": teach fill and requestTree about it")
	}
}
