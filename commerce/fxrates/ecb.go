package fxrates

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
)

// ECB's namespaces and the sender its feeds name.
const (
	gesmesNS  = "http://www.gesmes.org/xml/2002-08-01"
	eurofxNS  = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
	ecbSender = "European Central Bank"
	// Base is the currency every reference rate is quoted against.
	Base = "EUR"
)

// Limits a feed must respect; anything beyond is refused, not trimmed.
const (
	// MaxFeedBytes bounds a feed body: the daily feed is about 1.6 KB and
	// the 90-day one about 110 KB.
	MaxFeedBytes = 1 << 20
	// maxDays bounds the reference days of one feed (the 90-day feed).
	maxDays = 100
	// maxCurrencies bounds the currencies of one day (ECB publishes ~30).
	maxCurrencies = 60
	// maxRateLen bounds a rate's text ("1532.15", "25.185").
	maxRateLen = 20
)

// RequiredCurrencies must be quoted on every day: the currencies the
// warehouses' rate cards charge in besides the euro. A day without them
// cannot price a shipment and is taken as a wrong feed.
var RequiredCurrencies = []string{"USD", "GBP"}

// ErrMalformed wraps every reason a feed is refused; nothing of a refused
// feed is stored.
var ErrMalformed = errors.New("fxrates: feed refused")

var (
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
	// rateRE: a plain positive decimal, no sign, exponent or spaces.
	rateRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// Day is one reference date's rates: units of each currency per 1 EUR, as
// the decimal text the ECB published (exact; parsed with big.Rat).
type Day struct {
	Date  time.Time         `json:"date"`
	Rates map[string]string `json:"rates"`
}

// DateString is the reference date as YYYY-MM-DD.
func (d Day) DateString() string { return d.Date.Format(time.DateOnly) }

// envelope is the gesmes document: Envelope > subject, Sender > name,
// Cube > Cube[time] > Cube[currency, rate].
type envelope struct {
	XMLName xml.Name `xml:"http://www.gesmes.org/xml/2002-08-01 Envelope"`
	Subject string   `xml:"http://www.gesmes.org/xml/2002-08-01 subject"`
	Sender  struct {
		Name string `xml:"http://www.gesmes.org/xml/2002-08-01 name"`
	} `xml:"http://www.gesmes.org/xml/2002-08-01 Sender"`
	Cube struct {
		Days []struct {
			Time  string `xml:"time,attr"`
			Rates []struct {
				Currency string `xml:"currency,attr"`
				Rate     string `xml:"rate,attr"`
			} `xml:"http://www.ecb.int/vocabulary/2002-08-01/eurofxref Cube"`
		} `xml:"http://www.ecb.int/vocabulary/2002-08-01/eurofxref Cube"`
	} `xml:"http://www.ecb.int/vocabulary/2002-08-01/eurofxref Cube"`
}

// Parse reads a feed body: the ECB's gesmes envelope with one or more
// reference days, each with its currencies. now bounds the dates (a day
// after tomorrow is refused). Every day must be well formed; one bad rate
// refuses the whole feed.
func Parse(body []byte, now time.Time) ([]Day, error) {
	if len(body) > MaxFeedBytes {
		return nil, fmt.Errorf("%w: body over %d bytes", ErrMalformed, MaxFeedBytes)
	}
	if err := plainDocument(body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var env envelope
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true
	// Only UTF-8 (the ECB's encoding); an unknown charset is refused, not
	// guessed.
	dec.CharsetReader = nil
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("%w: not an ECB reference-rate document: %v", ErrMalformed, err)
	}
	if strings.TrimSpace(env.Sender.Name) != ecbSender {
		return nil, fmt.Errorf("%w: sender %q, want %q", ErrMalformed, clip(env.Sender.Name), ecbSender)
	}
	if strings.TrimSpace(env.Subject) != "Reference rates" {
		return nil, fmt.Errorf("%w: subject %q, want %q", ErrMalformed, clip(env.Subject), "Reference rates")
	}
	days := env.Cube.Days
	if len(days) == 0 || len(days) > maxDays {
		return nil, fmt.Errorf("%w: %d reference days (want 1 to %d)", ErrMalformed, len(days), maxDays)
	}
	latest := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	seen := map[string]bool{}
	out := make([]Day, 0, len(days))
	for _, d := range days {
		date, err := time.Parse(time.DateOnly, d.Time)
		if err != nil {
			return nil, fmt.Errorf("%w: reference date %q", ErrMalformed, clip(d.Time))
		}
		if date.After(latest) || date.Year() < 1999 {
			return nil, fmt.Errorf("%w: reference date %s is outside 1999..tomorrow", ErrMalformed, d.Time)
		}
		if seen[d.Time] {
			return nil, fmt.Errorf("%w: reference date %s repeated", ErrMalformed, d.Time)
		}
		seen[d.Time] = true
		if len(d.Rates) == 0 || len(d.Rates) > maxCurrencies {
			return nil, fmt.Errorf("%w: %s has %d rates (want 1 to %d)", ErrMalformed, d.Time, len(d.Rates), maxCurrencies)
		}
		day := Day{Date: date, Rates: make(map[string]string, len(d.Rates))}
		for _, r := range d.Rates {
			if err := checkRate(r.Currency, r.Rate); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, d.Time, err)
			}
			if _, dup := day.Rates[r.Currency]; dup {
				return nil, fmt.Errorf("%w: %s: %s quoted twice", ErrMalformed, d.Time, r.Currency)
			}
			day.Rates[r.Currency] = r.Rate
		}
		for _, c := range RequiredCurrencies {
			if _, ok := day.Rates[c]; !ok {
				return nil, fmt.Errorf("%w: %s has no %s rate", ErrMalformed, d.Time, c)
			}
		}
		out = append(out, day)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date.Before(out[j].Date) })
	return out, nil
}

// plainDocument checks the shape before decoding: one root element and
// nothing after it, no DOCTYPE (the ECB feed has none; a DTD is how
// entity tricks start), only UTF-8.
func plainDocument(body []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true
	depth, roots := 0, 0
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.Directive:
			return errors.New("a DOCTYPE or other directive")
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(tok)) > 0 {
				return errors.New("text outside the root element")
			}
		}
		if roots > 1 {
			return errors.New("more than one root element")
		}
	}
	if roots != 1 || depth != 0 {
		return errors.New("not one complete root element")
	}
	return nil
}

// checkRate refuses a currency code or rate that is not a plain positive
// decimal: negative, zero, exponent, NaN, absurdly long.
func checkRate(currency, rate string) error {
	if !currencyRE.MatchString(currency) || currency == Base {
		return fmt.Errorf("currency %q", clip(currency))
	}
	if len(rate) > maxRateLen || !rateRE.MatchString(rate) {
		return fmt.Errorf("%s rate %q is not a positive decimal", currency, clip(rate))
	}
	r, ok := new(big.Rat).SetString(rate)
	if !ok || r.Sign() <= 0 {
		return fmt.Errorf("%s rate %q is not positive", currency, clip(rate))
	}
	return nil
}

// clip keeps feed text short in error messages (they reach logs).
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
