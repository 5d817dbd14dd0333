package activities_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
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

// commerceEnv runs activities.Commerce on a fresh database with the seeded
// catalog, the real evidence store and the real registry.
type commerceEnv struct {
	suite testsuite.WorkflowTestSuite
	pool  *pgxpool.Pool
	store *evidence.Store
	act   *activities.Commerce
}

func newCommerceEnv(t *testing.T) *commerceEnv {
	t.Helper()
	pool := testenv.Postgres(t)
	store, cipher := evidencetest.Store(t, pool, nil)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := commerce.RegisterTools(reg, commerce.ToolDeps{Pool: pool, Audit: store, Sealer: cipher, Unsealed: true}); err != nil {
		t.Fatal(err)
	}
	return &commerceEnv{pool: pool, store: store, act: &activities.Commerce{Invoker: toolkit.NewInvoker(reg, store, zap.NewNop())}}
}

// run executes one activity in its own test environment (each one is a
// separate activity execution, as in a workflow) and decodes its result.
func run[T any](t *testing.T, c *commerceEnv, name string, in any) (T, error) {
	t.Helper()
	env := c.suite.NewTestActivityEnvironment()
	env.RegisterActivity(c.act)
	var out T
	val, err := env.ExecuteActivity(name, in)
	if err != nil {
		return out, err
	}
	if err := val.Get(&out); err != nil {
		t.Fatalf("%s result: %v", name, err)
	}
	return out, nil
}

// wantApplicationError checks the Temporal error a workflow would see.
func wantApplicationError(t *testing.T, err error, code toolkit.Code) *toolkit.Error {
	t.Helper()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		t.Fatalf("want ApplicationError %s, got %v", code, err)
	}
	if ae.Type() != string(code) || ae.NonRetryable() == code.Retryable() {
		t.Fatalf("type %s non-retryable %v, want %s", ae.Type(), ae.NonRetryable(), code)
	}
	return toolkit.AsError(err)
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

	q, err := run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{
		Request: userRequest("q"), Args: commerce.GetQuoteArgs{Items: items, Currency: "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, q.Envelope)
	s, err := run[activities.QuoteShippingResult](t, c, "QuoteShipping", activities.QuoteShippingInput{
		Request: userRequest("s"), Args: commerce.QuoteShippingArgs{Items: items, Currency: "EUR",
			Destination: commerce.Address{Country: dest.Country, PostalCode: dest.PostalCode}}})
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, s.Envelope)
	v, err := run[activities.CheckComplianceResult](t, c, "CheckCompliance", activities.CheckComplianceInput{
		Request: userRequest("c"), Args: commerce.CheckComplianceArgs{Items: items, Destination: dest}})
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, v.Envelope)
	if v.Verdict.Verdict != commerce.VerdictAllow {
		t.Fatalf("verdict %+v", v.Verdict)
	}
	d, err := run[activities.EstimateDutiesAndTaxesResult](t, c, "EstimateDutiesAndTaxes", activities.EstimateDutiesAndTaxesInput{
		Request: userRequest("d"), Args: commerce.DutiesAndTaxesArgs{Lines: q.Quote.Lines, Shipping: s.Shipping.Options[0],
			Destination: dest, Currency: "EUR", Incoterm: commerce.IncotermDDP}})
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, d.Envelope)
	tot, err := run[activities.ComputeTotalResult](t, c, "ComputeTotal", activities.ComputeTotalInput{
		Request: userRequest("t"), Args: commerce.ComputeTotalArgs{Quote: q.Quote, Shipping: s.Shipping.Options[0],
			Duties: d.Duties, ShippingExpiresAt: &s.Shipping.ExpiresAt}})
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, tot.Envelope)

	draftReq := userRequest("o")
	draftReq.IdempotencyKey = "draft-order-e2e-1"
	in := activities.CreateDraftOrderInput{Request: draftReq, Args: commerce.CreateDraftOrderArgs{
		Total: tot.Total, ConfirmedQuoteHash: tot.Total.QuoteHash, ShipTo: dest}}
	first, err := run[activities.CreateDraftOrderResult](t, c, "CreateDraftOrder", in)
	if err != nil {
		t.Fatal(err)
	}
	c.checkEvidence(t, first.Envelope)
	// Concurrent repeats of the same key: one row, the same id everywhere.
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := run[activities.CreateDraftOrderResult](t, c, "CreateDraftOrder", in)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.DraftOrder.DraftOrderID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != first.DraftOrder.DraftOrderID {
			t.Fatalf("repeat gave %s, first %s", id, first.DraftOrder.DraftOrderID)
		}
	}
	var rows int
	if err := c.pool.QueryRow(context.Background(), `SELECT count(*) FROM draft_orders`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d draft rows (%v)", rows, err)
	}
}

func TestCommerceActivityErrorsAreTyped(t *testing.T) {
	c := newCommerceEnv(t)
	_, err := run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{Request: userRequest("1"),
		Args: commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "NOPE-0001", Quantity: 1}}, Currency: "EUR"}})
	wantApplicationError(t, err, toolkit.NotFound)

	_, err = run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{Request: userRequest("2"),
		Args: commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "WCH-AUTO-40-STL", Quantity: 2}}, Currency: "CHF"}})
	wantApplicationError(t, err, toolkit.OutOfStock)

	q, err := run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{Request: userRequest("3"),
		Args: commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.pool.Exec(context.Background(), `UPDATE catalog_products SET base_price_minor = 2700 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}
	_, err = run[activities.GetQuoteResult](t, c, "GetQuote", activities.GetQuoteInput{Request: userRequest("4"),
		Args: commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR",
			ExpectedPriceHash: q.Quote.PriceHash}})
	te := wantApplicationError(t, err, toolkit.PriceChanged)
	if te.Details["price_hash"] == nil || te.Details["price_hash"] == q.Quote.PriceHash {
		t.Fatalf("details %v", te.Details)
	}

	_, err = run[activities.CheckComplianceResult](t, c, "CheckCompliance", activities.CheckComplianceInput{Request: userRequest("5"),
		Args: commerce.CheckComplianceArgs{Items: []commerce.LineItem{{SKU: "LTR-BUTANE-REF", Quantity: 1}},
			Destination: commerce.Address{Country: "GB", PostalCode: "SW1A 1AA"}}})
	te = wantApplicationError(t, err, toolkit.ComplianceBlocked)
	if te.Details["verdict"] == nil {
		t.Fatalf("details %v", te.Details)
	}

	_, err = run[activities.QuoteShippingResult](t, c, "QuoteShipping", activities.QuoteShippingInput{Request: userRequest("6"),
		Args: commerce.QuoteShippingArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR",
			Destination: commerce.Address{Country: "JP", PostalCode: "1000"}}})
	te = wantApplicationError(t, err, toolkit.AddressInvalid)
	if f, _ := te.Details["fields"].([]any); len(f) != 1 || f[0] != "destination.postal_code" {
		t.Fatalf("fields %v", te.Details["fields"])
	}
}
