package tax

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// periodAt returns the last period starting on or before at. Periods are
// sorted; an undated first period covers everything before the next one.
func periodAt(ps []ratePeriod, at time.Time) (ratePeriod, bool) {
	idx := -1
	for i, p := range ps {
		if !p.From.After(at) {
			idx = i
		}
	}
	if idx < 0 {
		return ratePeriod{}, false
	}
	return ps[idx], true
}

// rateSet is the consumption tax of one destination at one date.
type rateSet struct {
	taxName string
	// comps are the components with their standard rates; books holds the
	// book rate per component where one is recorded.
	comps []Component
	books []*money.Rate
	notes []Note
	// exempts are each component's exemptions (exemptions.go); currency is
	// the country's, in which their limits are stated.
	exempts  [][]*exemption
	currency string
	// localKnown: the address's local taxes are modelled (or there are
	// none); shipping: the state's rule on taxing shipping (nil: not
	// modelled); notModelled names what the answer leaves out (local.go).
	localKnown  bool
	shipping    *shippingRule
	notModelled []string
}

// total is the combined standard rate.
func (s rateSet) total() money.Rate {
	var t money.Rate
	for _, c := range s.comps {
		t += c.Rate
	}
	return t
}

// rateFor returns the rate of component i for a line's HS code.
func (s rateSet) rateFor(i int, hs string) money.Rate {
	if strings.HasPrefix(hs, "4901") && s.books[i] != nil {
		return *s.books[i]
	}
	return s.comps[i].Rate
}

// rateSetFor resolves country (and region) at a date.
func (r *rules) rateSetFor(country, region, postal string, at time.Time) (rateSet, error) {
	c, ok := r.rates[country]
	if !ok {
		return rateSet{}, fmt.Errorf("%w: %s", ErrUnsupportedDestination, country)
	}
	var s rateSet
	s.taxName, s.currency = c.TaxName, c.Currency
	if p, ok := periodAt(c.Periods, at); ok {
		s.comps = append(s.comps, Component{Name: c.TaxName, Rate: p.Standard})
		s.books = append(s.books, p.Books)
		s.exempts = append(s.exempts, nil)
		if p.Note != "" {
			s.notes = append(s.notes, Note{Code: "RATE_NOTE_" + country, Message: p.Note})
		}
	} else if len(c.Periods) > 0 {
		return rateSet{}, fmt.Errorf("%w: %s rates before %s", ErrNoRuleInForce, country, c.Periods[0].From.Format(time.DateOnly))
	}
	region = strings.ToUpper(strings.TrimSpace(region))
	if len(c.Regions) > 0 {
		if region == "" {
			if c.RegionRequired {
				return rateSet{}, fmt.Errorf("%w: %s", ErrRegionRequired, country)
			}
		} else {
			rg, ok := c.Regions[region]
			if !ok {
				return rateSet{}, fmt.Errorf("%w: %s-%s", ErrUnknownRegion, country, region)
			}
			if rg.Mode == "unsupported" {
				return rateSet{}, fmt.Errorf("%w: %s-%s: %s", ErrUnsupportedRegion, country, region, rg.Note)
			}
			if rg.Mode != "none" {
				p, ok := periodAt(rg.Periods, at)
				if !ok {
					return rateSet{}, fmt.Errorf("%w: %s-%s", ErrNoRuleInForce, country, region)
				}
				comp := Component{Name: rg.TaxName, Rate: p.Standard}
				if rg.Mode == "replace" {
					s.comps, s.books, s.exempts = nil, nil, nil
					s.taxName = rg.TaxName
				} else if s.taxName == "" || len(s.comps) == 0 {
					s.taxName = rg.TaxName
				} else {
					s.taxName += "+" + rg.TaxName
				}
				s.comps = append(s.comps, comp)
				s.books = append(s.books, p.Books)
				s.exempts = append(s.exempts, regionExemptions(rg))
				if p.Note != "" {
					s.notes = append(s.notes, Note{Code: "RATE_NOTE_" + country + "_" + region, Message: p.Note})
				}
				if c.LocalSalesTax {
					s.addLocal(country, region, rg, postal, at)
				}
			}
		}
	}
	if c.Note != "" {
		s.notes = append(s.notes, Note{Code: "RATES_" + country, Message: c.Note})
	}
	return s, nil
}

// SupportedDestinations lists the countries Estimate accepts, sorted.
func SupportedDestinations() []string {
	r, err := load()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(r.rates))
	for c := range r.rates {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Schemes lists every low-value scheme label the import regimes can
// report (Result.Scheme), sorted and without duplicates.
func Schemes() []string {
	r, err := load()
	if err != nil {
		return nil
	}
	var out []string
	for _, g := range r.regimes {
		for _, p := range g.Periods {
			if p.Scheme != "" && !slices.Contains(out, p.Scheme) {
				out = append(out, p.Scheme)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Currency returns the currency of a destination ("" when the destination
// is not supported): what an order shipped there is usually priced in.
func Currency(country string) string {
	r, err := load()
	if err != nil {
		return ""
	}
	if c, ok := r.rates[strings.ToUpper(country)]; ok {
		return c.Currency
	}
	return ""
}

// regionExemptions are pointers to a region's exemptions (their parsed
// limits are set by validate).
func regionExemptions(rg *regionRates) []*exemption {
	var out []*exemption
	for i := range rg.Exemptions {
		out = append(out, &rg.Exemptions[i])
	}
	return out
}
