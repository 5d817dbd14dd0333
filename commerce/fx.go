package commerce

import (
	"embed"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"sync"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

//go:embed data/*.json
var dataFS embed.FS

// FXTable converts amounts between currencies. The built-in table is the
// ECB reference rates in data/fx_rates.json (the fallback); FeedFX gives a
// table per stored day of the ECB feed.
type FXTable interface {
	// Convert converts amount into currency to, exactly and rounded half-up
	// once to the minor unit of to.
	Convert(amount Money, to string) (Money, error)
	// Version names the rate table, for evidence.
	Version() string
}

// fxFile is the shape of data/fx_rates.json.
type fxFile struct {
	RulesetVersion string            `json:"ruleset_version"`
	AsOf           string            `json:"as_of"`
	Base           string            `json:"base"`
	Sources        []string          `json:"sources"`
	Rates          map[string]string `json:"rates"`
}

// StaticFX is an FXTable over fixed rates per unit of a base currency.
type StaticFX struct {
	version string
	rates   map[string]*big.Rat
	// asOf is the reference date of the rates (YYYY-MM-DD), "" unknown.
	asOf string
}

var builtinFX = sync.OnceValues(func() (*StaticFX, error) {
	raw, err := dataFS.ReadFile("data/fx_rates.json")
	if err != nil {
		return nil, err
	}
	var f fxFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("commerce: data/fx_rates.json: %w", err)
	}
	t, err := NewStaticFX(f.RulesetVersion, f.Base, f.Rates)
	if err != nil {
		return nil, err
	}
	t.asOf = f.AsOf
	return t, nil
})

// BuiltinFX returns the embedded ECB table: the offline fallback of the
// feed (docs/operators.md#exchange-rates), named fallback_table in quotes.
func BuiltinFX() (*StaticFX, error) { return builtinFX() }

// NewStaticFX builds a table from decimal rates (units per 1 base). Every
// currency must be known to the money package, so rounding is defined.
func NewStaticFX(version, base string, rates map[string]string) (*StaticFX, error) {
	if version == "" {
		return nil, fmt.Errorf("commerce: fx table without a version")
	}
	t := &StaticFX{version: version, rates: map[string]*big.Rat{}}
	for code, s := range rates {
		r, ok := new(big.Rat).SetString(s)
		if !ok || r.Sign() <= 0 {
			return nil, fmt.Errorf("commerce: fx %s: bad rate %q", code, s)
		}
		if !money.Known(code) {
			return nil, fmt.Errorf("commerce: fx %s: currency unknown to the money table", code)
		}
		t.rates[code] = r
	}
	if one := t.rates[base]; one == nil || one.Cmp(big.NewRat(1, 1)) != 0 {
		return nil, fmt.Errorf("commerce: fx base %s must have rate 1", base)
	}
	return t, nil
}

// Version implements FXTable.
func (t *StaticFX) Version() string { return t.version }

// AsOf is the reference date of the rates (YYYY-MM-DD), "" when unknown.
func (t *StaticFX) AsOf() string { return t.asOf }

// Currencies lists the currencies the table can quote in, sorted: not
// one that was withdrawn (BGN, which the shipped table of 2024 still
// rates), since no order may be priced in it (commerce/rules/money).
func (t *StaticFX) Currencies() []string {
	out := make([]string, 0, len(t.rates))
	for c := range t.rates {
		if _, gone := money.Withdrawn(c); !gone {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Convert implements FXTable: the cross rate to/from goes through the base
// as one exact rational, so only the final result is rounded.
func (t *StaticFX) Convert(amount Money, to string) (Money, error) {
	if amount.Currency == to {
		return amount, nil
	}
	from, ok := t.rates[amount.Currency]
	if !ok {
		return Money{}, toolkit.Errorf(toolkit.InvalidArgument, "no exchange rate for %s in %s", amount.Currency, t.version)
	}
	into, ok := t.rates[to]
	if !ok {
		return Money{}, toolkit.Errorf(toolkit.InvalidArgument, "currency %s cannot be quoted: no exchange rate in %s", to, t.version).
			WithDetail("fields", []string{"currency"}).WithDetail("supported", t.Currencies())
	}
	cross := new(big.Rat).Quo(into, from)
	v, err := money.ConvertRat(amount.Amount, amount.Currency, to, cross)
	if err != nil {
		return Money{}, toolkit.Errorf(toolkit.InvalidArgument, "convert %s to %s: %v", amount.Currency, to, err)
	}
	return Money{Amount: v, Currency: to}, nil
}
