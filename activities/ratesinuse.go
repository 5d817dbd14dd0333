package activities

import (
	"context"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// RatesInUseInput asks which exchange rates prices use now; it has no
// fields.
type RatesInUseInput struct{}

// RatesInUseResult is the rates prices use now and the currencies they
// price; Unavailable says why there are none (stale, none stored): a
// price then waits for rates, and the start check refuses nothing.
type RatesInUseResult struct {
	commerce.RatesInUse
	Unavailable *toolkit.Error `json:"unavailable,omitempty"`
}

// RatesInUse answers the Go client's start check, and the draft order's
// inside its first quote (refuseCurrency; docs/tools.md#exchange-rates):
// the rates the tools price with at this moment, from the same source and
// clock, and their currencies. Unusable rates are an answer, not a failure
// (its error is always nil).
func (a *Tools) RatesInUse(ctx context.Context, _ RatesInUseInput) (RatesInUseResult, error) {
	now := time.Now
	if a.Clock != nil {
		now = a.Clock
	}
	r, err := commerce.CurrentRates(ctx, a.FX, now())
	if err != nil {
		return RatesInUseResult{Unavailable: toolkit.AsError(err)}, nil
	}
	return RatesInUseResult{RatesInUse: r}, nil
}

// refuseCurrency is the draft order's start check against the rates in
// use (QuoteInput.CheckRates): the same check the Go client runs before a
// start (commerce.RatesInUse.CheckCurrency). Rates that cannot be read
// now refuse nothing: the quote waits for them and says so.
func (a *Tools) refuseCurrency(ctx context.Context, currency string) *toolkit.Error {
	r, _ := a.RatesInUse(ctx, RatesInUseInput{})
	if r.Unavailable != nil {
		return nil
	}
	return toolkit.AsError(r.CheckCurrency(currency))
}
