package activities_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// commerceEnv runs the tool activity (activities.Tools) on a fresh
// database with the seeded catalog, the real evidence store and the real
// registry.
type commerceEnv struct {
	suite testsuite.WorkflowTestSuite
	pool  *pgxpool.Pool
	store *evidence.Store
	act   *activities.Tools
}

func newCommerceEnv(t *testing.T) *commerceEnv {
	t.Helper()
	pool := testenv.Postgres(t)
	store, cipher := evidencetest.Store(t, pool, nil)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := commerce.RegisterTools(reg, commerce.ToolDeps{Pool: pool, Audit: store, Sealer: cipher, Snapshots: store, Unsealed: true}); err != nil {
		t.Fatal(err)
	}
	return &commerceEnv{pool: pool, store: store, act: &activities.Tools{Invoker: toolkit.NewInvoker(reg, store, zap.NewNop())}}
}

// run calls tool once through the tool activity, in its own test
// environment (each call is a separate activity execution, as in a
// workflow), and decodes its data into T. A refusal is the error of its
// code, as the workflows' callTool returns it, with the envelope.
func run[T any](t *testing.T, c *commerceEnv, tool string, req toolkit.Request, args any) (T, toolkit.Response, error) {
	t.Helper()
	var out T
	env := c.suite.NewTestActivityEnvironment()
	env.RegisterActivity(c.act)
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	val, err := env.ExecuteActivity("CallTool", activities.CallToolInput{Call: toolkit.ToolCall{Tool: tool, Request: req, Input: raw}})
	if err != nil {
		return out, toolkit.Response{}, err
	}
	var res activities.CallToolResult
	if err := val.Get(&res); err != nil {
		t.Fatalf("%s result: %v", tool, err)
	}
	if !res.Envelope.OK {
		return out, res.Envelope, res.Envelope.Error
	}
	if err := res.Envelope.Decode(&out); err != nil {
		t.Fatalf("%s data: %v", tool, err)
	}
	return out, res.Envelope, nil
}

// wantRefusal checks a refusal's code and whether it may be retried.
func wantRefusal(t *testing.T, err error, code toolkit.Code) *toolkit.Error {
	t.Helper()
	te := toolkit.AsError(err)
	if te == nil || te.Code != code || te.CanRetry != code.Retryable() {
		t.Fatalf("want refusal %s, got %v", code, err)
	}
	return te
}

func userRequest(id string) toolkit.Request {
	return toolkit.Request{RequestID: "req-" + id, Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_900"}, UserID: "u_900"}
}

// checkEvidence asserts the envelope names a stored snapshot whose output
// hash is the envelope's source hash.
func (c *commerceEnv) checkEvidence(t *testing.T, env toolkit.Response) {
	t.Helper()
	if env.Evidence == nil || len(env.Evidence.Sources) != 1 {
		t.Fatalf("envelope without evidence: %+v", env)
	}
	rec, err := c.store.Get(context.Background(), env.SnapshotID())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := toolkit.CanonicalHash(env.Data)
	if rec.OutputHash != env.Evidence.Sources[0].Hash || rec.OutputHash != want || rec.Tool != env.Tool {
		t.Fatalf("snapshot %s: hash %s, envelope %s, data %s", rec.SnapshotID, rec.OutputHash, env.Evidence.Sources[0].Hash, want)
	}
}

func TestCommerceActivitiesEndToEnd(t *testing.T) {
	c := newCommerceEnv(t)
	items := []commerce.LineItem{{SKU: "SWT-MERINO-L-NVY", Quantity: 1}, {SKU: "COF-ETH-YIR-1KG", Quantity: 2}}
	dest := commerce.Address{Name: "Lena Schmidt", Line1: "Prinsengracht 263", City: "Amsterdam", PostalCode: "1016 GV", Country: "NL"}

	in := roundInput(items...)
	in.Order.ShipTo = dest
	res, err := c.quote(t, in)
	if err != nil {
		t.Fatal(err)
	}
	var tot commerce.Total
	for _, call := range res.Calls {
		if !call.Envelope.OK {
			t.Fatalf("%s refused: %+v", call.Tool, call.Envelope.Error)
		}
		c.checkEvidence(t, call.Envelope)
	}
	env, ok := res.Answer(activities.StepTotal)
	if !ok || env.Decode(&tot) != nil {
		t.Fatalf("no total: %+v", res.Calls)
	}

	draftReq := userRequest("o")
	draftReq.IdempotencyKey = "draft-order-e2e-1"
	args := commerce.CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash, ShipTo: dest}
	first, fenv, err := run[commerce.DraftOrder](t, c, commerce.ToolCreateDraftOrder, draftReq, args)
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, fenv)
	// Concurrent repeats of the same key: one row, the same id everywhere.
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _, err := run[commerce.DraftOrder](t, c, commerce.ToolCreateDraftOrder, draftReq, args)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.DraftOrderID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != first.DraftOrderID {
			t.Fatalf("repeat gave %s, first %s", id, first.DraftOrderID)
		}
	}
	var rows int
	if err := c.pool.QueryRow(context.Background(), `SELECT count(*) FROM draft_orders`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d draft rows (%v)", rows, err)
	}
}

func TestCommerceActivityErrorsAreTyped(t *testing.T) {
	c := newCommerceEnv(t)
	_, _, err := run[commerce.Quote](t, c, commerce.ToolGetQuote, userRequest("1"),
		commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "NOPE-0001", Quantity: 1}}, Currency: "EUR"})
	wantRefusal(t, err, toolkit.NotFound)

	_, _, err = run[commerce.Quote](t, c, commerce.ToolGetQuote, userRequest("2"),
		commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "WCH-AUTO-40-STL", Quantity: 2}}, Currency: "CHF"})
	wantRefusal(t, err, toolkit.OutOfStock)

	q, _, err := run[commerce.Quote](t, c, commerce.ToolGetQuote, userRequest("3"),
		commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.pool.Exec(context.Background(), `UPDATE catalog_products SET base_price_minor = 2700 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}
	_, _, err = run[commerce.Quote](t, c, commerce.ToolGetQuote, userRequest("4"),
		commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR", ExpectedPriceHash: q.PriceHash})
	te := wantRefusal(t, err, toolkit.PriceChanged)
	if te.Details["price_hash"] == nil || te.Details["price_hash"] == q.PriceHash {
		t.Fatalf("details %v", te.Details)
	}

	_, _, err = run[commerce.ComplianceVerdict](t, c, commerce.ToolCheckCompliance, userRequest("5"),
		commerce.CheckComplianceArgs{Items: []commerce.LineItem{{SKU: "LTR-BUTANE-REF", Quantity: 1}},
			Destination: commerce.Address{Country: "GB", PostalCode: "SW1A 1AA"}})
	te = wantRefusal(t, err, toolkit.ComplianceBlocked)
	if te.Details["verdict"] == nil {
		t.Fatalf("details %v", te.Details)
	}

	_, _, err = run[commerce.ShippingQuote](t, c, commerce.ToolQuoteShipping, userRequest("6"),
		commerce.QuoteShippingArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR",
			Destination: commerce.Address{Country: "JP", PostalCode: "1000"}})
	te = wantRefusal(t, err, toolkit.AddressInvalid)
	if f, _ := te.Details["fields"].([]any); len(f) != 1 || f[0] != "destination.postal_code" {
		t.Fatalf("fields %v", te.Details["fields"])
	}
}
