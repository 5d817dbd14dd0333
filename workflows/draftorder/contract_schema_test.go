package draftorder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/workflows/approval"
)

// contractSchemas are the JSON Schemas of what a backend in another
// language sends to and gets from a draft order (docs/other-languages.md):
// the workflow's input, each update's input and result, the status query's
// answer, the signals' payloads. They are generated from the Go types the
// workflow decodes, so they cannot drift: this test fails when a file in
// schemas/workflows/ differs from what the types give
// (CARTWRIGHT_WRITE_SCHEMAS=1 rewrites them).
var contractSchemas = map[string]reflect.Type{
	"draft_order.input.json":                  reflect.TypeFor[Input](),
	"draft_order.result.json":                 reflect.TypeFor[Result](),
	"draft_order.status.json":                 reflect.TypeFor[Status](),
	"draft_order.next_action.input.json":      reflect.TypeFor[NextActionInput](),
	"draft_order.confirm_total.input.json":    reflect.TypeFor[ConfirmInput](),
	"draft_order.confirm_total.result.json":   reflect.TypeFor[ConfirmAnswer](),
	"draft_order.decide_approval.input.json":  reflect.TypeFor[approval.Signal](),
	"draft_order.decide_approval.result.json": reflect.TypeFor[approval.Answer](),
	// The refund run of a paid draft order (docs/payments.md#refunds).
	"draft_order_refund.input.json":          reflect.TypeFor[RefundInput](),
	"draft_order_refund.refund.input.json":   reflect.TypeFor[RefundAsk](),
	"draft_order_refund.status.json":         reflect.TypeFor[RefundStatus](),
	"draft_order_refund.result.json":         reflect.TypeFor[RefundResult](),
	"draft_order_refund.returned.input.json": reflect.TypeFor[ReturnedSignal](),
}

func contractSchema(t *testing.T, name string, typ reflect.Type) []byte {
	t.Helper()
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		// Go durations are JSON integers of nanoseconds.
		reflect.TypeFor[time.Duration](): {Type: "integer", Description: "a duration in nanoseconds (Go's time.Duration): 30 minutes is 1800000000000"},
		reflect.TypeFor[time.Time]():     {Type: "string", Format: "date-time"},
		reflect.TypeFor[money.Rate]():    {Type: "string", Description: "a percentage as a decimal string, e.g. \"8.875\""},
	}}
	s, err := jsonschema.ForType(typ, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if strings.Contains(name, ".input.") {
		// What an input must carry is the workflow's check
		// (Input.Check, docs/other-languages.md#the-input), not
		// Go's omitempty: an empty actor, say, is filled in, not refused.
		dropRequired(s)
	}
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.ID = "https://cartwright.dev/schemas/workflows/" + name
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestContractSchemasMatchTheTypes(t *testing.T) {
	dir := filepath.Join("..", "..", "schemas", "workflows")
	for name, typ := range contractSchemas {
		want := contractSchema(t, name, typ)
		path := filepath.Join(dir, name)
		if os.Getenv("CARTWRIGHT_WRITE_SCHEMAS") == "1" {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is not what %s gives (%v): run CARTWRIGHT_WRITE_SCHEMAS=1 go test ./workflows/draftorder -run TestContractSchemas", path, typ, err)
		}
	}
}

// dropRequired removes every required list of s and its subschemas.
func dropRequired(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Required = nil
	for _, p := range s.Properties {
		dropRequired(p)
	}
	dropRequired(s.Items)
	dropRequired(s.AdditionalProperties)
	for _, d := range s.Defs {
		dropRequired(d)
	}
}
