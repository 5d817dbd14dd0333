package activities_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// callTool runs the one tool activity on the commerce env's invoker.
func (c *commerceEnv) callTool(t *testing.T, tool string, args any) (activities.CallToolResult, error) {
	t.Helper()
	env := c.suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Tools{Invoker: c.act.Invoker})
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

// TestLegacyActivityKeepsItsContract: a per-tool activity (kept for runs
// recorded before the tool activity) still fails with the refusal's code,
// as those runs expect, and the refusal is evidenced all the same.
func TestLegacyActivityKeepsItsContract(t *testing.T) {
	c := newCommerceEnv(t)
	_, err := run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{
		Request: userRequest("legacy"), Args: commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "SWT-MERINO-L-NVY", Quantity: 999}}, Currency: "EUR"}})
	wantApplicationError(t, err, toolkit.OutOfStock)
	var n int
	if err := c.pool.QueryRow(t.Context(), `SELECT count(*) FROM evidence_snapshots WHERE tool = $1 AND status = 'error'`, commerce.ToolGetQuote).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d refusal snapshots, want 1", n)
	}
	// Every tool the workflows called before the tool activity keeps its
	// per-tool activity, a method of one of the registered structs.
	structs := []any{&activities.Commerce{}, &activities.Onboarding{}, &activities.Approval{}}
	tools := append(append(commerce.Specs(), onboarding.Specs()...), support.Specs()...)
	for _, spec := range tools {
		if spec.Name == commerce.ToolChooseOrigins {
			continue // newer than the tool activity: no run ever called it per tool
		}
		la, ok := activities.LegacyActivityOf(spec.Name)
		found := false
		for _, s := range structs {
			if _, has := reflect.TypeOf(s).MethodByName(la.Name); has {
				found = true
			}
		}
		if !ok || !found || la.ResultField == "" {
			t.Errorf("tool %s: no per-tool activity %+v", spec.Name, la)
		}
	}
}
