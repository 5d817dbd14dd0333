package fxrates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PGStore keeps the days in fx_rate_days (migration 00170).
type PGStore struct{ Pool *pgxpool.Pool }

// ErrChanged: the feed carries other rates for a date already stored.
// Quotes already cite that date, so the stored day is kept and the feed
// refused.
var ErrChanged = errors.New("fxrates: feed changed the rates of a stored date")

// ErrNoRates: nothing stored yet.
var ErrNoRates = errors.New("fxrates: no exchange rates stored")

// SaveResult says what a Save did.
type SaveResult struct {
	// Stored are the dates added, Known the dates already held with the
	// same rates.
	Stored []string `json:"stored,omitempty"`
	Known  []string `json:"known,omitempty"`
	// Latest is the newest date held after the save.
	Latest string `json:"latest"`
}

// Save stores every day of a feed in one transaction: all of them or,
// when one contradicts a stored day, none.
func (s PGStore) Save(ctx context.Context, f Feed) (SaveResult, error) {
	var res SaveResult
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		for _, d := range f.Days {
			raw, err := json.Marshal(d.Rates)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO fx_rate_days (rate_date, base, rates, source, feed_sha256)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (rate_date) DO NOTHING`,
				d.Date, Base, raw, f.Source, f.SHA256[:])
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				res.Stored = append(res.Stored, d.DateString())
				continue
			}
			var held map[string]string
			if err := tx.QueryRow(ctx, `SELECT rates FROM fx_rate_days WHERE rate_date = $1`, d.Date).Scan(&held); err != nil {
				return err
			}
			if !maps.Equal(held, d.Rates) {
				return fmt.Errorf("%w: %s", ErrChanged, d.DateString())
			}
			res.Known = append(res.Known, d.DateString())
		}
		return nil
	})
	if err != nil {
		return SaveResult{}, err
	}
	latest, err := s.Latest(ctx)
	if err != nil {
		return SaveResult{}, err
	}
	res.Latest = latest.DateString()
	return res, nil
}

// Latest returns the newest stored day, or ErrNoRates.
func (s PGStore) Latest(ctx context.Context) (Day, error) {
	return s.LatestOnOrBefore(ctx, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
}

// LatestOnOrBefore returns the newest stored day dated at or before at's
// UTC date (the rates in force at that moment), or ErrNoRates.
func (s PGStore) LatestOnOrBefore(ctx context.Context, at time.Time) (Day, error) {
	var d Day
	on := at.UTC().Format(time.DateOnly)
	err := s.Pool.QueryRow(ctx, `SELECT rate_date, rates FROM fx_rate_days WHERE rate_date <= $1::date
		ORDER BY rate_date DESC LIMIT 1`, on).Scan(&d.Date, &d.Rates)
	if errors.Is(err, pgx.ErrNoRows) {
		return Day{}, ErrNoRates
	}
	if err != nil {
		return Day{}, err
	}
	d.Date = time.Date(d.Date.Year(), d.Date.Month(), d.Date.Day(), 0, 0, 0, 0, time.UTC)
	return d, nil
}
