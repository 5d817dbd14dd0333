package commerce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// FX rate sources named in a quote's fx_rates (docs/tools.md#exchange-rates).
const (
	// FXSourceFeed: the latest day of the ECB reference rates the fetch
	// schedule stored (docs/operators.md#exchange-rates).
	FXSourceFeed = "ecb_feed"
	// FXSourceFallback: the table shipped in data/fx_rates.json, for dev
	// and tests, or when no feed is configured.
	FXSourceFallback = "fallback_table"
)

// FXRates says which exchange rates a call converted with: the source and
// the ECB reference date. It goes into the quote, hence its evidence.
type FXRates struct {
	Source string `json:"source"`
	// Date is the reference date of the rates (YYYY-MM-DD).
	Date string `json:"date"`
	Base string `json:"base"`
}

// FXSource gives each tool call the table it converts with.
type FXSource interface {
	// Rates returns the table to use at now and what it is, or an
	// UPSTREAM_ERROR when no usable rates exist (stale, none stored).
	Rates(ctx context.Context, now time.Time) (FXTable, FXRates, error)
}

// staticSource always answers one table: the fallback.
type staticSource struct {
	table FXTable
	info  FXRates
}

func (s staticSource) Rates(context.Context, time.Time) (FXTable, FXRates, error) {
	return s.table, s.info, nil
}

// fallbackSource wraps a fixed table (the shipped one unless a test gives
// another) and names it as the fallback with its date.
func fallbackSource(t FXTable) staticSource {
	info := FXRates{Source: FXSourceFallback, Base: fxrates.Base}
	if d, ok := t.(interface{ AsOf() string }); ok {
		info.Date = d.AsOf()
	}
	return staticSource{table: t, info: info}
}

// LatestRates is where FeedFX reads the newest stored day dated at or
// before a moment (fxrates.PGStore).
type LatestRates interface {
	LatestOnOrBefore(ctx context.Context, at time.Time) (fxrates.Day, error)
}

// FeedFX prices with the latest stored ECB day, refusing rates older than
// MaxAge: a price never rests on rates the shop would not accept
// (docs/operators.md#exchange-rates).
type FeedFX struct {
	Store LatestRates
	// MaxAge is how old the newest day may be, counted from its reference
	// date (00:00 UTC) to now.
	MaxAge time.Duration
	// CacheFor keeps the newest day this long between reads (0: 30s).
	CacheFor time.Duration

	mu      sync.Mutex
	day     fxrates.Day
	table   *StaticFX
	readAt  time.Time
	readFor string // the UTC date the cached day was read for
}

// Rates implements FXSource.
func (f *FeedFX) Rates(ctx context.Context, now time.Time) (FXTable, FXRates, error) {
	day, table, err := f.latest(ctx, now)
	if errors.Is(err, fxrates.ErrNoRates) {
		return nil, FXRates{}, toolkit.Errorf(toolkit.UpstreamError, "no exchange rates stored yet").
			WithDetail("upstream_code", "fx_rates_missing").
			WithRecovery("retry later: the exchange-rate feed has not been read yet")
	}
	if err != nil {
		return nil, FXRates{}, toolkit.Errorf(toolkit.UpstreamError, "read exchange rates: %v", err).WithCause(err)
	}
	date := day.DateString()
	if age := now.Sub(day.Date); age > f.MaxAge {
		return nil, FXRates{}, toolkit.Errorf(toolkit.UpstreamError,
			"the latest exchange rates are of %s, older than the %s allowed", date, f.MaxAge).
			WithDetail("upstream_code", "fx_rates_stale").WithDetail("rate_date", date).
			WithDetail("max_age_hours", int(f.MaxAge.Hours())).
			WithRecovery("retry later: prices need exchange rates newer than " + date)
	}
	return table, FXRates{Source: FXSourceFeed, Date: date, Base: fxrates.Base}, nil
}

// latest reads the newest day in force at at (never one dated after it)
// and its table, cached briefly by the wall clock: the cache saves
// database reads, the age check uses the caller's now.
func (f *FeedFX) latest(ctx context.Context, at time.Time) (fxrates.Day, *StaticFX, error) {
	wall, on := time.Now(), at.UTC().Format(time.DateOnly)
	f.mu.Lock()
	defer f.mu.Unlock()
	ttl := f.CacheFor
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	if f.readFor == on && wall.Sub(f.readAt) < ttl && wall.Sub(f.readAt) >= 0 {
		return f.day, f.table, nil
	}
	day, err := f.Store.LatestOnOrBefore(ctx, at)
	if err != nil {
		return fxrates.Day{}, nil, err
	}
	if f.table == nil || !day.Date.Equal(f.day.Date) {
		t, err := FeedTable(day)
		if err != nil {
			return fxrates.Day{}, nil, err
		}
		f.table = t
	}
	f.day, f.readAt, f.readFor = day, wall, on
	return f.day, f.table, nil
}

// FeedTable builds the table of one stored day: version fx-ecb-<date>,
// EUR at 1, every currency the money package knows (others cannot be
// rounded, so they cannot be quoted).
func FeedTable(day fxrates.Day) (*StaticFX, error) {
	rates := map[string]string{fxrates.Base: "1"}
	for c, r := range day.Rates {
		if money.Known(c) && c != fxrates.Base {
			rates[c] = r
		}
	}
	t, err := NewStaticFX("fx-ecb-"+day.DateString(), fxrates.Base, rates)
	if err != nil {
		return nil, fmt.Errorf("rates of %s: %w", day.DateString(), err)
	}
	t.asOf = day.DateString()
	return t, nil
}
