package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The status says what its total assumed: the exchange rates (source and
// reference date) and what the tax leaves out.
func TestStatusSaysWhatTheTotalAssumed(t *testing.T) {
	usd := func(a int64) commerce.Money { return commerce.Money{Amount: a, Currency: "USD"} }
	st := draftorder.DraftOrderStatus{State: draftorder.StateNeedsConfirm, Destination: "US", Currency: "USD",
		Total: &commerce.Total{Currency: "USD", Subtotal: usd(13000), Shipping: usd(1790), Duty: usd(0), Tax: usd(0),
			GrandTotal: usd(14790), Incoterm: "DDP",
			FXRates:        &commerce.FXRates{Source: commerce.FXSourceFeed, Date: "2026-11-20", Base: "EUR"},
			TaxNotModelled: []string{"local_sales_tax_rate", "shipping_taxability"}}}
	var b bytes.Buffer
	printStatus(&b, "draft-order/u/k", st)
	out := b.String()
	for _, want := range []string{"fx rates     ecb feed of 2026-11-20", "not modelled local sales tax rate, shipping taxability"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
