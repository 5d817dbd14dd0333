package activities_test

import (
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// callTool runs the one tool activity on the commerce env's invoker.
func (c *commerceEnv) callTool(t *testing.T, tool string, args any) (activities.CallToolResult, error) {
	t.Helper()
	env := c.suite.NewTestActivityEnvironment()
	env.RegisterActivity(c.act)
	raw, _ := json.Marshal(args)
	val, err := env.ExecuteActivity("CallTool", activities.CallToolInput{Call: toolkit.ToolCall{Tool: tool, Request: userRequest("tool"), Input: raw}})
	var out activities.CallToolResult
	if err == nil {
		if err := val.Get(&out); err != nil {
			t.Fatal(err)
		}
	}
	return out, err
}

// TestToolActivityAnswersRefusalsAsEnvelopes: through the real invoker, a refusal is the tool activity's
// result — an ok=false envelope with the code and its own snapshot holding
// the error object — while an answer carries its data as before.
func TestToolActivityAnswersRefusalsAsEnvelopes(t *testing.T) {
	c := newCommerceEnv(t)
	ok, err := c.callTool(t, commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "SWT-MERINO-L-NVY", Quantity: 1}}, Currency: "EUR"})
	if err != nil || !ok.Envelope.OK {
		t.Fatalf("quote: %v %+v", err, ok.Envelope)
	}
	c.checkEvidence(t, ok.Envelope)

	res, err := c.callTool(t, commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "SWT-MERINO-L-NVY", Quantity: 999}}, Currency: "EUR"})
	if err != nil {
		t.Fatalf("a refusal failed the activity: %v", err)
	}
	env := res.Envelope
	if env.OK || env.Status != toolkit.StatusError || env.Error == nil || env.Error.Code != toolkit.OutOfStock || len(env.Data) != 0 {
		t.Fatalf("refusal envelope %+v (error %+v)", env, env.Error)
	}
	rec, err := c.store.Get(t.Context(), env.SnapshotID())
	if err != nil {
		t.Fatalf("refusal snapshot %q: %v", env.SnapshotID(), err)
	}
	errJSON, _ := json.Marshal(env.Error)
	want, _ := toolkit.CanonicalHash(errJSON)
	if rec.Status != string(toolkit.StatusError) || rec.OutputHash != want || env.Evidence.Sources[0].Hash != want {
		t.Fatalf("refusal snapshot: status %s hash %s, envelope %s, error object %s", rec.Status, rec.OutputHash, env.Evidence.Sources[0].Hash, want)
	}
}
