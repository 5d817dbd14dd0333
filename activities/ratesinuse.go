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

// RatesInUse answers the draft order's start check and the Go client's
// (docs/tools.md#exchange-rates): the rates the tools price with at this
// moment, from the same source and clock, and their currencies. Unusable
// rates are an answer, not a failure.
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
