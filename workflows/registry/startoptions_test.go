package registry

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestStartOptionsKeepTheKeyRules: every flow's start options attach to an
// open run; draft orders and tool calls free the key after a failed run
// only (docs/backend.md#idempotency-keys), onboardings start again after
// any end.
func TestStartOptionsKeepTheKeyRules(t *testing.T) {
	in, err := draftorder.Input{
		Request: toolkit.Request{RequestID: "req-test", UserID: "u_123", IdempotencyKey: "key-0001-abcd", Currency: "EUR"},
		Order:   commerce.Order{Items: []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"}},
	}.Check()
	if err != nil {
		t.Fatal(err)
	}
	d, err := draftorder.StartOptions("q", in)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := toolcall.StartOptions("q", toolkit.ToolCall{Tool: "pricing.get_realtime_quote",
		Request: toolkit.Request{RequestID: "req-unit-0001", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "a"}, UserID: "u_1"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := onboardingflow.StartOptions("q", "m_acme_goods")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		opts  client.StartWorkflowOptions
		id    string
		reuse enumspb.WorkflowIdReusePolicy
	}{
		"draft order": {d, "draft-order/u_123/key-0001-abcd", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY},
		"tool call":   {tc, "tool-call/u_1/req-unit-0001", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY},
		"onboarding":  {o, "onboarding/m_acme_goods", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
	} {
		if c.opts.ID != c.id || c.opts.TaskQueue != "q" || c.opts.WorkflowIDReusePolicy != c.reuse ||
			c.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING || c.opts.TypedSearchAttributes.Size() != 3 {
			t.Fatalf("%s: %+v", name, c.opts)
		}
	}
	if _, err := onboardingflow.StartOptions("q", "Acme Goods GmbH"); err == nil {
		t.Fatal("a merchant name became an onboarding id")
	}
}
