package commerce

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// RatesInUse are the exchange rates prices use at a moment: what they are
// (source and reference date) and the currencies they price. The start of
// a draft order checks its currency against them, so a currency those
// rates lack is refused before a run exists (docs/tools.md#exchange-rates).
type RatesInUse struct {
	Rates FXRates `json:"rates"`
	// Currencies are the codes the rates price, sorted (EUR included).
	Currencies []string `json:"currencies"`
}

// CurrentRates asks src (nil: the shipped table, as the tools fall back
// to) for the rates in use at now. Its error is src's: UPSTREAM_ERROR
// when no usable rates exist (stale, none stored).
func CurrentRates(ctx context.Context, src FXSource, now time.Time) (RatesInUse, error) {
	if src == nil {
		t, err := BuiltinFX()
		if err != nil {
			return RatesInUse{}, err
		}
		src = fallbackSource(t)
	}
	table, info, err := src.Rates(ctx, now)
	if err != nil {
		return RatesInUse{}, err
	}
	out := RatesInUse{Rates: info}
	if c, ok := table.(interface{ Currencies() []string }); ok {
		out.Currencies = c.Currencies()
	}
	return out, nil
}

// CheckCurrency is the one check of an order's currency against the
// rates in use, run by every start path (the Go client and the starter
// before a start, the draft order's first step for any other client):
// INVALID_ARGUMENT naming currency and offering only what those rates
// price. Rates that list no currencies (unknown) refuse nothing: the
// pricing tool answers then.
func (r RatesInUse) CheckCurrency(currency string) error {
	if len(r.Currencies) == 0 || slices.Contains(r.Currencies, currency) {
		return nil
	}
	return toolkit.Errorf(toolkit.InvalidArgument, "currency %s cannot be quoted: the exchange rates in use (%s of %s) do not price it; one of %s",
		currency, r.Rates.Source, r.Rates.Date, strings.Join(r.Currencies, ", ")).
		WithDetail("fields", []string{"currency"}).WithDetail("supported", slices.Clone(r.Currencies)).
		WithDetail("rate_date", r.Rates.Date).WithDetail("rate_source", r.Rates.Source).
		WithRecovery("fix the named fields and call again: a currency of details.supported")
}
