package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// FXRates reads the ECB reference-rate feed and stores its days
// (docs/operators.md#exchange-rates). The feed's URL is the worker's
// configuration, never an argument: a workflow input cannot point the
// worker at another address. Activity type name: FetchFXRates.
type FXRates struct {
	Fetcher fxrates.Fetcher
	Store   fxrates.PGStore
	Logger  *zap.Logger
	// Now is time.Now unless a test sets it.
	Now func() time.Time
}

// FetchFXRatesResult is what one fetch stored.
type FetchFXRatesResult struct {
	fxrates.SaveResult
	// Source is the feed URL without user info or query.
	Source string `json:"source"`
}

// FetchFXRates fetches, checks and stores the feed: all of its days or
// none. A refused feed (malformed, hostile, contradicting a stored day)
// is an UPSTREAM_ERROR that is not retried within the run: the next
// scheduled pass reads the feed again.
func (a *FXRates) FetchFXRates(ctx context.Context) (FetchFXRatesResult, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	feed, err := a.Fetcher.Fetch(ctx, now().UTC())
	if err != nil {
		return FetchFXRatesResult{}, a.refuse("fetch", err)
	}
	res, err := a.Store.Save(ctx, feed)
	if err != nil {
		return FetchFXRatesResult{}, a.refuse("store", err)
	}
	a.logger().Info("exchange rates read", zap.String("source", feed.Source), zap.Strings("stored", res.Stored),
		zap.Int("known", len(res.Known)), zap.String("latest", res.Latest))
	return FetchFXRatesResult{SaveResult: res, Source: feed.Source}, nil
}

// refuse maps a fetch or store failure into the closed set: a feed that
// is wrong is refused for good (CONFLICT when it rewrites a stored day),
// an unreachable one is retried.
func (a *FXRates) refuse(step string, err error) error {
	a.logger().Warn("exchange rates not stored", zap.String("step", step), zap.Error(err))
	var te *toolkit.Error
	switch {
	case errors.Is(err, fxrates.ErrMalformed):
		te = toolkit.Errorf(toolkit.UpstreamError, "%v", err).WithDetail("upstream_code", "fx_feed_refused")
		return nonRetryable(te)
	case errors.Is(err, fxrates.ErrNotConfigured):
		te = toolkit.Errorf(toolkit.UpstreamError, "%v", err).WithDetail("upstream_code", "fx_feed_not_configured")
		return nonRetryable(te)
	case errors.Is(err, fxrates.ErrChanged):
		te = toolkit.Errorf(toolkit.Conflict, "%v", err)
	case errors.Is(err, fxrates.ErrUnavailable):
		te = toolkit.Errorf(toolkit.UpstreamError, "%v", err).WithDetail("upstream_code", "fx_feed_unavailable")
	default:
		te = toolkit.Errorf(toolkit.UpstreamError, "%s exchange rates: %v", step, err).WithCause(err)
	}
	return ApplicationError(te)
}

// nonRetryable is ApplicationError for a failure that retrying within the
// run cannot mend (the same feed would be refused again).
func nonRetryable(te *toolkit.Error) error {
	return temporal.NewApplicationErrorWithOptions(te.Message, string(te.Code),
		temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*te}})
}

func (a *FXRates) logger() *zap.Logger {
	if a.Logger == nil {
		return zap.NewNop()
	}
	return a.Logger
}
