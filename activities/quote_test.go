package activities_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// roundInput is a draft order's first quote to Berlin.
func roundInput(items ...commerce.LineItem) activities.QuoteInput {
	in := activities.QuoteInput{
		Order: commerce.Order{Items: items, Currency: "EUR", ShippingService: commerce.ServiceStandard, Incoterm: commerce.IncotermDDP,
			ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"}},
		ApprovalConfidence: 0.8, Requests: map[string]toolkit.Request{},
	}
	for i, st := range activities.QuoteSteps {
		req := userRequest("round")
		req.CorrelationID = fmt.Sprintf("corr-00000000000000%02d", i)
		in.Requests[st.Step] = req
	}
	return in
}

// quote runs the quote as the worker does (one activity
// execution per call; the test environment gives each the same ids, as a
// local activity run again after a lost workflow task has).
func (c *commerceEnv) quote(t *testing.T, in activities.QuoteInput) (activities.QuoteResult, error) {
	t.Helper()
	env := c.suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Tools{Invoker: c.act.Invoker})
	val, err := env.ExecuteActivity("Quote", in)
	var out activities.QuoteResult
	if err == nil {
		if err := val.Get(&out); err != nil {
			t.Fatal(err)
		}
	}
	return out, err
}

// quoteAs runs the quote outside an activity, as request id: its steps
// are keyed by the request (docs/evidence.md#one-snapshot-per-step), so
// quotes of different ids never share a step.
func (c *commerceEnv) quoteAs(t *testing.T, id string, in activities.QuoteInput) (activities.QuoteResult, error) {
	t.Helper()
	for step, req := range in.Requests {
		req.RequestID = "req-" + id
		in.Requests[step] = req
	}
	return (&activities.Tools{Invoker: c.act.Invoker}).Quote(t.Context(), in)
}

func (c *commerceEnv) snapshots(t *testing.T) int {
	t.Helper()
	var n int
	if err := c.pool.QueryRow(t.Context(), `SELECT count(*) FROM evidence_snapshots`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestQuoteThroughTheInvoker: the quote makes its four calls through the
// real invoker and store, each with its own evidence, the total derived
// from the snapshots staged in the same batch; run again with the same
// ids (a lost workflow task) it answers what the evidence holds and
// writes nothing new.
func TestQuoteThroughTheInvoker(t *testing.T) {
	c := newCommerceEnv(t)
	in := roundInput(commerce.LineItem{SKU: "SWT-MERINO-L-NVY", Quantity: 1})
	first, err := c.quote(t, in)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, call := range first.Calls {
		tools = append(tools, call.Tool)
		if !call.Envelope.OK {
			t.Fatalf("%s refused: %+v", call.Tool, call.Envelope.Error)
		}
		c.checkEvidence(t, call.Envelope)
		if call.Envelope.Meta.InputFingerprint == "" {
			t.Fatalf("%s: no input hash", call.Tool)
		}
	}
	want := []string{commerce.ToolChooseOrigins, commerce.ToolGetQuote, commerce.ToolCheckCompliance, commerce.ToolComputeTotal}
	if !reflect.DeepEqual(tools, want) {
		t.Fatalf("calls %v, want %v", tools, want)
	}
	if n := c.snapshots(t); n != 4 {
		t.Fatalf("%d snapshots, want 4", n)
	}
	again, err := c.quote(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.snapshots(t); n != 4 {
		t.Fatalf("the quote run again wrote: %d snapshots, want 4", n)
	}
	for i := range first.Calls {
		a, b := first.Calls[i], again.Calls[i]
		// The same snapshot and the same data (the stored copy's bytes
		// are PostgreSQL's jsonb rendering: compare canonical hashes).
		ha, _ := toolkit.CanonicalHash(a.Envelope.Data)
		hb, _ := toolkit.CanonicalHash(b.Envelope.Data)
		if a.Envelope.SnapshotID() != b.Envelope.SnapshotID() || ha != hb {
			t.Fatalf("%s answered differently the second time: %s vs %s", a.Tool, a.Envelope.SnapshotID(), b.Envelope.SnapshotID())
		}
	}
}

// TestQuoteStopsAtARefusal: a basket no warehouse holds is refused by
// the origin choice; the quote stops there, with the refusal evidenced.
func TestQuoteStopsAtARefusal(t *testing.T) {
	c := newCommerceEnv(t)
	res, err := c.quote(t, roundInput(commerce.LineItem{SKU: "SWT-MERINO-L-NVY", Quantity: 999}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Calls) != 1 || res.Calls[0].Tool != commerce.ToolChooseOrigins || res.Calls[0].Envelope.OK ||
		res.Calls[0].Envelope.Error.Code != toolkit.OutOfStock {
		t.Fatalf("calls %+v", res.Calls)
	}
	for _, call := range res.Calls {
		if call.Envelope.SnapshotID() == "" {
			t.Fatalf("%s: no evidence", call.Tool)
		}
	}
	if n := c.snapshots(t); n != len(res.Calls) {
		t.Fatalf("%d snapshots for %d calls", n, len(res.Calls))
	}
}
