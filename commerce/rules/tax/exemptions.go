package tax

import (
	"fmt"
	"slices"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// A region's sales tax may exempt a class of goods: the clothing
// exemptions of the US states (data/rates.json, each with its law and
// sources; commerce/rules/README.md#us-sales-tax). Goods are recognised by
// HS prefix (apparel chapters 61 and 62, footwear 64), the price test is
// per item — the line's value over its quantity, in the country's currency
// — and the exemption relieves that component only (local taxes are not
// modelled).

// Kinds of exemption.
const (
	// exemptAll: every item of the class is exempt (NJ, PA, MN, VT).
	exemptAll = "all"
	// exemptBelow: an item priced below Limit is exempt; at or above it the
	// whole price is taxed (NY: less than USD 110 per item).
	exemptBelow = "below"
	// exemptFirst: the first Limit of each item's price is exempt and the
	// excess is taxed (MA: USD 175, RI: USD 250).
	exemptFirst = "first"
)

// exemption is one documented exemption of a region's tax.
type exemption struct {
	// Code names it in the estimate's notes (e.g. US_NY_CLOTHING).
	Code string `json:"code"`
	// Goods says in words what it covers; HSPrefixes how the engine
	// recognises them.
	Goods      string   `json:"goods"`
	HSPrefixes []string `json:"hs_prefixes"`
	Kind       string   `json:"kind"`
	// Limit is the per-item price in major units of the country's
	// currency (below, first).
	Limit string `json:"limit"`
	// From is when it took effect in the form modelled.
	From day `json:"from"`
	// Law cites the provision; Sources are the texts it was checked
	// against; Note is what the estimate says when it applies.
	Law     string   `json:"law"`
	Sources []string `json:"sources"`
	Note    string   `json:"note"`

	limit int64 // Limit in minor units
}

// check validates one exemption of region rc (currency cur).
func (x *exemption) check(rc, cur string) error {
	if x.Code == "" || x.Goods == "" || x.Law == "" || x.Note == "" || len(x.Sources) == 0 || len(x.HSPrefixes) == 0 {
		return fmt.Errorf("tax: %s exemption %q lacks code, goods, law, note, sources or HS prefixes", rc, x.Code)
	}
	for _, s := range x.Sources {
		if len(s) < 9 || s[:8] != "https://" {
			return fmt.Errorf("tax: %s exemption %s: source %q is not an https URL", rc, x.Code, s)
		}
	}
	for _, p := range x.HSPrefixes {
		if !hsPrefixRE.MatchString(p) {
			return fmt.Errorf("tax: %s exemption %s: HS prefix %q", rc, x.Code, p)
		}
	}
	switch x.Kind {
	case exemptAll:
		if x.Limit != "" {
			return fmt.Errorf("tax: %s exemption %s: kind all takes no limit", rc, x.Code)
		}
	case exemptBelow, exemptFirst:
		v, err := money.ParseMajor(x.Limit, cur)
		if err != nil || v <= 0 {
			return fmt.Errorf("tax: %s exemption %s: limit %q", rc, x.Code, x.Limit)
		}
		x.limit = v
	default:
		return fmt.Errorf("tax: %s exemption %s: kind %q", rc, x.Code, x.Kind)
	}
	return nil
}

// covers reports whether the exemption is in force at at for HS code hs.
func (x *exemption) covers(hs string, at time.Time) bool {
	if x.From.After(at) {
		return false
	}
	return slices.ContainsFunc(x.HSPrefixes, func(p string) bool { return len(hs) >= len(p) && hs[:len(p)] == p })
}

// taxable is what of base (line i's tax base for component ci) the
// component taxes after its exemptions, and the exemption that applied
// (nil: none).
func (e *estimator) taxable(ci, i int, base int64) (int64, *exemption, error) {
	if ci >= len(e.rs.exempts) {
		return base, nil, nil
	}
	for _, x := range e.rs.exempts[ci] {
		if !x.covers(e.hs[i], e.at) {
			continue
		}
		if x.Kind == exemptAll {
			return 0, x, nil
		}
		l := e.in.Lines[i]
		unit, err := money.MulDiv(l.CustomsValue, 1, l.Quantity)
		if err != nil {
			return 0, nil, err
		}
		if unit, err = e.toThreshold(unit, e.rs.currency); err != nil {
			return 0, nil, err
		}
		switch {
		case x.Kind == exemptBelow && unit < x.limit:
			return 0, x, nil
		case x.Kind == exemptBelow:
			return base, nil, nil
		case unit <= x.limit:
			return 0, x, nil
		}
		// exemptFirst above the limit: the share of each item's price
		// over the limit is taxed.
		part, err := money.MulDiv(base, unit-x.limit, unit)
		return part, x, err
	}
	return base, nil, nil
}
