package tax

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// US sales tax is destination-based: the state rate plus the local
// (county, city, district) rates of the delivery address, and in some
// states on the shipping charge too (commerce/rules/README.md#us-sales-tax).
// A region's `local` entry in data/rates.json says what of it is modelled,
// each fact with its publication and date; what is not modelled is named
// in Result.NotModelled, never silently left out.

// What Result.NotModelled can name.
const (
	// NotModelledLocalRate: the address has local sales taxes whose rate
	// is not in the data; the tax is the state's alone.
	NotModelledLocalRate = "local_sales_tax_rate"
	// NotModelledShipping: whether the state taxes shipping is not in the
	// data; shipping was left untaxed.
	NotModelledShipping = "shipping_taxability"
)

// Values of localRules.Taxes.
const (
	localNone       = "none"       // the state has no local sales taxes
	localLocalities = "localities" // only the listed localities are modelled
)

// localRules is what a region's data says about its local sales taxes and
// its taxing of shipping.
type localRules struct {
	// Taxes is "none" or "localities"; absent, nothing local is modelled.
	Taxes      string     `json:"taxes"`
	Localities []locality `json:"localities"`
	// Shipping says whether delivery charges of taxable goods are taxed;
	// nil: not modelled.
	Shipping *shippingRule `json:"shipping"`
	// Source and AsOf cite where "none" comes from.
	Source string `json:"source"`
	AsOf   string `json:"as_of"`
}

// locality is one local jurisdiction, recognised by its postal codes.
type locality struct {
	Code string `json:"code"`
	Name string `json:"name"`
	// PostalPrefixes are the ZIP code prefixes entirely inside it.
	PostalPrefixes []string `json:"postal_prefixes"`
	// Components are its local taxes, each added to the state's.
	Components []localComponent `json:"components"`
	// Exemptions are codes of the state's exemptions the locality also
	// grants (New York City exempts clothing under USD 110 like the state).
	Exemptions []string `json:"exemptions"`
	From       day      `json:"from"`
	// Law, Sources and AsOf: where the rates come from and when they were
	// last checked against them.
	Law     string   `json:"law"`
	Sources []string `json:"sources"`
	AsOf    string   `json:"as_of"`
}

type localComponent struct {
	Name string     `json:"name"`
	Rate money.Rate `json:"rate"`
	From day        `json:"from"`
}

// shippingRule is whether a state taxes delivery charges.
type shippingRule struct {
	Taxable bool     `json:"taxable"`
	Law     string   `json:"law"`
	Sources []string `json:"sources"`
	AsOf    string   `json:"as_of"`
}

// check validates a region's local rules.
func (l *localRules) check(rc string, rg *regionRates) error {
	if l.Taxes != "" && l.Taxes != localNone && l.Taxes != localLocalities {
		return fmt.Errorf("tax: %s local taxes %q", rc, l.Taxes)
	}
	if l.Taxes == localNone && (l.Source == "" || l.AsOf == "") {
		return fmt.Errorf("tax: %s: local taxes none needs a source and as_of", rc)
	}
	if (l.Taxes == localLocalities) != (len(l.Localities) > 0) {
		return fmt.Errorf("tax: %s: localities listed without taxes %q", rc, localLocalities)
	}
	for _, lc := range l.Localities {
		if lc.Code == "" || lc.Name == "" || lc.Law == "" || lc.AsOf == "" || len(lc.Sources) == 0 || len(lc.PostalPrefixes) == 0 || len(lc.Components) == 0 {
			return fmt.Errorf("tax: %s locality %q lacks code, name, law, as_of, sources, postal prefixes or components", rc, lc.Code)
		}
		for _, x := range lc.Exemptions {
			if !slices.ContainsFunc(rg.Exemptions, func(e exemption) bool { return e.Code == x }) {
				return fmt.Errorf("tax: %s locality %s: exemption %s is not the state's", rc, lc.Code, x)
			}
		}
	}
	if s := l.Shipping; s != nil && (s.Law == "" || s.AsOf == "" || len(s.Sources) == 0) {
		return fmt.Errorf("tax: %s shipping rule lacks law, as_of or sources", rc)
	}
	return nil
}

// addLocal adds the local components of the delivery address to s and
// records what is not modelled. postal is the destination's postal code.
func (s *rateSet) addLocal(country, region string, rg *regionRates, postal string, at time.Time) {
	l := rg.Local
	if l == nil {
		l = &localRules{}
	}
	s.localKnown = l.Taxes == localNone
	postal = strings.ReplaceAll(strings.TrimSpace(postal), " ", "")
	for _, lc := range l.Localities {
		if lc.From.After(at) || !slices.ContainsFunc(lc.PostalPrefixes, func(p string) bool { return strings.HasPrefix(postal, p) }) {
			continue
		}
		var xs []*exemption
		for i := range rg.Exemptions {
			if slices.Contains(lc.Exemptions, rg.Exemptions[i].Code) {
				xs = append(xs, &rg.Exemptions[i])
			}
		}
		for _, c := range lc.Components {
			if c.From.After(at) {
				continue
			}
			s.comps = append(s.comps, Component{Name: c.Name, Rate: c.Rate})
			s.books = append(s.books, nil)
			s.exempts = append(s.exempts, xs)
		}
		s.notes = append(s.notes, Note{Code: "LOCAL_" + lc.Code, Message: fmt.Sprintf("%s: local sales tax added to the state's (%s; checked %s).", lc.Name, lc.Law, lc.AsOf)})
		s.localKnown = true
		break
	}
	if l.Shipping != nil {
		s.shipping = l.Shipping
		word := "not taxed"
		if l.Shipping.Taxable {
			word = "taxed with the goods they deliver"
		}
		s.notes = append(s.notes, Note{Code: "SHIPPING_TAX_" + country + "_" + region, Message: fmt.Sprintf("Delivery charges are %s (%s; checked %s).", word, l.Shipping.Law, l.Shipping.AsOf)})
	}
	zero := s.total() == 0 && l.Taxes == localNone
	if !s.localKnown && !zero {
		s.notModelled = append(s.notModelled, NotModelledLocalRate)
	}
	if s.shipping == nil && !zero {
		s.notModelled = append(s.notModelled, NotModelledShipping)
	}
}

// shipTaxed reports whether the destination's sales tax applies to the
// shipping charge (a modelled rule that says so).
func (s rateSet) shipTaxed() bool { return s.shipping != nil && s.shipping.Taxable }
