package money

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

//go:embed data/*.json
var dataFS embed.FS

// currencyFile is the shape of data/currencies.json.
type currencyFile struct {
	RulesetVersion string   `json:"ruleset_version"`
	AsOf           string   `json:"as_of"`
	Sources        []string `json:"sources"`
	Currencies     []struct {
		Code     string `json:"code"`
		Exponent int    `json:"exponent"`
		Name     string `json:"name"`
		// Withdrawn is the date the currency stopped being legal tender
		// (YYYY-MM-DD); Source where that is stated.
		Withdrawn string `json:"withdrawn"`
		Source    string `json:"source"`
	} `json:"currencies"`
}

type table struct {
	version  string
	sources  []string
	exponent map[string]int
	// withdrawn maps a replaced currency to the date it was withdrawn.
	withdrawn map[string]string
}

// load parses the embedded table once. The data is compiled in, so an error
// here is a build defect that the package tests catch; callers still get it
// as an error rather than a panic.
var load = sync.OnceValues(func() (*table, error) {
	raw, err := dataFS.ReadFile("data/currencies.json")
	if err != nil {
		return nil, err
	}
	var f currencyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("money: data/currencies.json: %w", err)
	}
	if !strings.HasPrefix(f.RulesetVersion, "money-") || len(f.Sources) == 0 {
		return nil, fmt.Errorf("money: data/currencies.json lacks ruleset_version or sources")
	}
	t := &table{version: f.RulesetVersion, sources: f.Sources, exponent: map[string]int{}, withdrawn: map[string]string{}}
	for _, c := range f.Currencies {
		if len(c.Code) != 3 || c.Exponent < 0 || c.Exponent > 4 {
			return nil, fmt.Errorf("money: bad currency entry %q/%d", c.Code, c.Exponent)
		}
		if _, dup := t.exponent[c.Code]; dup {
			return nil, fmt.Errorf("money: duplicate currency %q", c.Code)
		}
		t.exponent[c.Code] = c.Exponent
		if c.Withdrawn != "" {
			if !strings.HasPrefix(c.Source, "https://") {
				return nil, fmt.Errorf("money: %s withdrawn without a source", c.Code)
			}
			t.withdrawn[c.Code] = c.Withdrawn
		}
	}
	return t, nil
})

// ErrUnknownCurrency is wrapped by every error about a currency code that
// is not in the table.
var ErrUnknownCurrency = fmt.Errorf("money: unknown currency")

// RulesetVersion is the version of the currency table (e.g.
// "money-2026.11.1"); record it in evidence next to amounts it rounded.
func RulesetVersion() string {
	t, err := load()
	if err != nil {
		return ""
	}
	return t.version
}

// Exponent returns the number of decimals of the currency's minor unit
// (JPY 0, EUR 2, KWD 3). The code must be upper-case ISO 4217.
func Exponent(currency string) (int, error) {
	t, err := load()
	if err != nil {
		return 0, err
	}
	e, ok := t.exponent[currency]
	if !ok {
		return 0, fmt.Errorf("%w %q", ErrUnknownCurrency, currency)
	}
	return e, nil
}

// Known reports whether currency is an upper-case ISO 4217 code in the table.
func Known(currency string) bool {
	_, err := Exponent(currency)
	return err == nil
}

// Withdrawn returns the date (YYYY-MM-DD) a currency stopped being legal
// tender, and whether it did: its amounts can still be read (history), but
// nothing is priced in it any more (BGN since Bulgaria adopted the euro).
func Withdrawn(code string) (string, bool) {
	t, err := load()
	if err != nil {
		return "", false
	}
	d, ok := t.withdrawn[code]
	return d, ok
}
