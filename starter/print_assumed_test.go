package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The status says what its total assumed: the exchange rates (source and
// reference date) and what the tax leaves out.
func TestStatusSaysWhatTheTotalAssumed(t *testing.T) {
	usd := func(a int64) commerce.Money { return commerce.Money{Amount: a, Currency: "USD"} }
	st := draftorder.Status{State: draftorder.StateNeedsConfirm, Destination: "US", Currency: "USD",
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

// A wait shows its reason: the call, the upstream's message and code, the
// next try.
func TestStatusSaysWhatTheOrderWaitsFor(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	st := draftorder.Status{State: draftorder.StateQuoting, Destination: "DE", Currency: "EUR",
		Waiting: &draftorder.WaitReason{Call: "pricing.get_realtime_quote", Code: toolkit.UpstreamError, UpstreamCode: "fx_rates_stale",
			Message: "the latest exchange rates are of 2026-11-20, older than the 72h0m0s allowed", Since: at, Tries: 3, NextTryAt: at.Add(20 * time.Second)}}
	var b bytes.Buffer
	printStatus(&b, "draft-order/u/k", st)
	if want := "waiting      for pricing.get_realtime_quote since 10:00:00Z: the latest exchange rates are of 2026-11-20, older than the 72h0m0s allowed (UPSTREAM_ERROR, fx_rates_stale); call 3 failed, the next at 10:00:20Z"; !strings.Contains(b.String(), want) {
		t.Errorf("status:\n%s\nlacks %q", b.String(), want)
	}
}
