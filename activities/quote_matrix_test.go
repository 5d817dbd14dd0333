package activities_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/rules/address"
	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The quote's matrix: every destination of the rule data × every
// shipping service with one basket, and every catalogue category to one
// destination, through Quote on the real invoker, schemas and store
// (the tools' own matrix is commerce/matrix_test.go). A quote must end
// where the workflow stops calling tools — after the total, at a
// business refusal, at a blocked basket or a verdict for support staff —
// never on an infrastructure error, and every call it made must be
// evidenced.

// roundDestinations are the tax destinations (a valid example address,
// the first region its postcode belongs to where one is required) and the
// destinations compliance rules name, without a postcode (a blocked one is
// refused before the address is read; the others answer ADDRESS_INVALID).
func roundDestinations(t *testing.T) []commerce.Address {
	t.Helper()
	var out []commerce.Address
	for _, cc := range tax.SupportedDestinations() {
		a := commerce.Address{Name: "Matrix Customer", Line1: "1 Test Street", City: "Testville", Country: cc, PostalCode: address.Example(cc)}
		if address.RequiresRegion(cc) {
			if rs := address.RegionsFor(cc, a.PostalCode); len(rs) > 0 {
				a.Region = rs[0]
			}
		}
		out = append(out, a)
	}
	for _, d := range compliance.SanctionedDestinations() {
		out = append(out, commerce.Address{Name: "Matrix Customer", Line1: "1 Test Street", City: "Testville", Country: d.Country, Region: d.Region})
	}
	if len(out) < 40 {
		t.Fatalf("only %d destinations", len(out))
	}
	return out
}

// categoryBaskets is the first in-stock SKU of each catalogue category.
func (c *commerceEnv) categoryBaskets(t *testing.T) map[string]commerce.LineItem {
	t.Helper()
	rows, err := c.pool.Query(t.Context(), `SELECT DISTINCT ON (p.category) p.category, p.sku FROM catalog_products p
		JOIN catalog_stock s ON s.sku = p.sku WHERE p.active AND s.on_hand - s.reserved > 0 ORDER BY p.category, p.sku`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]commerce.LineItem{}
	for rows.Next() {
		var cat, sku string
		if err := rows.Scan(&cat, &sku); err != nil {
			t.Fatal(err)
		}
		out[cat] = commerce.LineItem{SKU: sku, Quantity: 1}
	}
	if len(out) < 10 {
		t.Fatalf("only %d categories", len(out))
	}
	return out
}

// checkRound asserts a round ended where the workflow stops calling tools
// and returns how it ended.
func checkRound(t *testing.T, what string, res activities.QuoteResult) string {
	t.Helper()
	if len(res.Calls) == 0 {
		t.Errorf("%s: no call", what)
		return "none"
	}
	for _, call := range res.Calls {
		if call.Envelope.SnapshotID() == "" {
			t.Errorf("%s: %s without evidence", what, call.Tool)
		}
		if !call.Envelope.OK && !slices.Contains([]toolkit.Code{toolkit.AddressInvalid, toolkit.ComplianceBlocked, toolkit.OutOfStock}, call.Envelope.Error.Code) {
			t.Errorf("%s: %s refused %s: %s", what, call.Tool, call.Envelope.Error.Code, call.Envelope.Error.Message)
		}
	}
	// Nothing past a point where the workflow stops: a refusal, or a
	// verdict that blocks or needs support staff.
	for i, call := range res.Calls[:len(res.Calls)-1] {
		var v commerce.ComplianceVerdict
		switch {
		case !call.Envelope.OK && call.Tool != commerce.ToolGetQuote:
			t.Errorf("%s: call %d (%s) came after %s refused", what, i+1, res.Calls[i+1].Tool, call.Tool)
		case call.Tool == commerce.ToolCheckCompliance && call.Envelope.Decode(&v) == nil &&
			(v.Verdict != commerce.VerdictAllow || v.Confidence < compliance.ApprovalThreshold):
			t.Errorf("%s: %s came after a %s verdict (confidence %.2f)", what, res.Calls[i+1].Tool, v.Verdict, v.Confidence)
		}
	}
	if len(res.Calls) >= 2 && !res.Calls[0].Envelope.OK && len(res.Calls) > 2 {
		t.Errorf("%s: the round went on after pricing refused", what)
	}
	last := res.Calls[len(res.Calls)-1]
	switch {
	case last.Tool == commerce.ToolComputeTotal && last.Envelope.OK:
		return "total"
	case !last.Envelope.OK:
		return "refused " + string(last.Envelope.Error.Code)
	case last.Tool == commerce.ToolCheckCompliance:
		var v commerce.ComplianceVerdict
		if err := last.Envelope.Decode(&v); err != nil || (v.Verdict == commerce.VerdictAllow && v.Confidence >= compliance.ApprovalThreshold) {
			t.Errorf("%s: the round stopped after an allowing verdict %+v", what, v)
		}
		return "review"
	}
	t.Errorf("%s: the round stopped after %s answered ok", what, last.Tool)
	return "stopped"
}

func TestQuoteMatrix(t *testing.T) {
	c := newCommerceEnv(t)
	baskets := c.categoryBaskets(t)
	outcomes := map[string]int{}
	calls := 0
	run := func(what string, in activities.QuoteInput) {
		res, err := c.quoteAs(t, what, in)
		if err != nil {
			t.Errorf("%s: the quote failed: %v", what, err)
			return
		}
		calls += len(res.Calls)
		outcomes[checkRound(t, what, res)]++
	}
	apparel := baskets["apparel"]
	if apparel.SKU == "" {
		t.Fatal("no apparel basket")
	}
	for _, dest := range roundDestinations(t) {
		for _, service := range shipping.Services() {
			in := roundInput(apparel)
			in.Order.ShipTo, in.Order.ShippingService, in.Order.Currency = dest, service, tax.Currency(dest.Country)
			if in.Order.Currency == "" {
				in.Order.Currency = "EUR"
			}
			run(fmt.Sprintf("%s-%s-%s", dest.Country, dest.Region, service), in)
		}
	}
	for category, item := range baskets {
		run("DE-"+category, roundInput(item))
	}
	if n := c.snapshots(t); n != calls {
		t.Errorf("%d snapshots for %d calls", n, calls)
	}
	if outcomes["total"] == 0 || outcomes["refused "+string(toolkit.ComplianceBlocked)] == 0 {
		t.Errorf("outcomes %v: the matrix must reach totals and refusals", outcomes)
	}
	t.Logf("quotes: %v, %d calls", outcomes, calls)
}
