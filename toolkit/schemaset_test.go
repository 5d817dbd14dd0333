package toolkit

import (
	"slices"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/schemas"
)

// TestActorTypeRootIsInvalidNotMissing: an
// actor.type present but outside the set is reported as invalid with the
// allowed values, not as missing.
func TestActorTypeRootIsInvalidNotMissing(t *testing.T) {
	req := Request{RequestID: "req-1", UserID: "u_1", Actor: Actor{Type: "root", ID: "x"}}
	te := AsError(CheckRequest(req))
	if te == nil || te.Code != InvalidArgument {
		t.Fatalf("root actor: %v", te)
	}
	if strings.Contains(te.Message, "missing") || !strings.Contains(te.Message, `actor.type "root" is invalid, one of user, agent, system`) {
		t.Fatalf("message %q", te.Message)
	}
	if f, _ := te.Details["fields"].([]string); !slices.Equal(f, []string{"actor.type"}) {
		t.Fatalf("fields %v", f)
	}
	req.Actor.Type = ""
	if te := AsError(CheckRequest(req)); te == nil || !strings.Contains(te.Message, "missing [actor.type]") {
		t.Fatalf("empty actor type: %v", te)
	}
	req.Actor.Type = ActorAgent
	if err := CheckRequest(req); err != nil {
		t.Fatalf("valid request: %v", err)
	}
}

// TestSchemasCompileOnce: every registry on the embedded
// folder and the start-side checks share one compiled schema per file.
func TestSchemasCompileOnce(t *testing.T) {
	a, b := NewRegistry(schemas.FS), NewRegistry(schemas.FS)
	env, err := BuiltinSchemas().Schema(envelopeSchema)
	if err != nil {
		t.Fatal(err)
	}
	if a.envelope != env || b.envelope != env {
		t.Fatal("a registry compiled its own envelope schema")
	}
	again, _ := BuiltinSchemas().Schema(envelopeSchema)
	if again != env {
		t.Fatal("the envelope schema compiled twice")
	}
}

// TestCheckToolInputNamesTheCallersFields: the start-side check reports a
// tool schema's failure under the caller's own field names.
func TestCheckToolInputNamesTheCallersFields(t *testing.T) {
	in := map[string]any{"items": []map[string]any{{"sku": "TEE-1", "quantity": 0}}, "currency": "EUR"}
	err := BuiltinSchemas().CheckToolInput("pricing.get_realtime_quote", in, func(f string) string { return "order." + f })
	te := AsError(err)
	if te == nil || te.Code != InvalidArgument {
		t.Fatalf("quantity 0: %v", err)
	}
	if f, _ := te.Details["fields"].([]string); !slices.Equal(f, []string{"order.items.0.quantity"}) {
		t.Fatalf("fields %v (%s)", f, te.Message)
	}
	in["items"] = []map[string]any{{"sku": "TEE-1", "quantity": 1}}
	if err := BuiltinSchemas().CheckToolInput("pricing.get_realtime_quote", in, nil); err != nil {
		t.Fatalf("valid input: %v", err)
	}
}
