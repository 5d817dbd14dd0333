package tax

import (
	"embed"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

//go:embed data/*.json
var dataFS embed.FS

// header is what every data file carries.
type header struct {
	RulesetVersion string   `json:"ruleset_version"`
	AsOf           string   `json:"as_of"`
	Sources        []string `json:"sources"`
}

// day is a date "YYYY-MM-DD" (UTC midnight); zero means "since before the
// data window".
type day struct{ time.Time }

func (d *day) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	t, err := time.Parse(time.DateOnly, s)
	d.Time = t
	return err
}

// ---- rates.json ----

type ratePeriod struct {
	From     day          `json:"from"`
	Standard money.Rate   `json:"standard"`
	Reduced  []money.Rate `json:"reduced"`
	Books    *money.Rate  `json:"books"`
	Note     string       `json:"note"`
}

type regionRates struct {
	Name    string       `json:"name"`
	TaxName string       `json:"tax_name"`
	Mode    string       `json:"mode"` // add | replace | none | unsupported
	Periods []ratePeriod `json:"periods"`
	// Note says why an unsupported region is not modelled.
	Note string `json:"note"`
	// Exemptions are the region tax's documented exemptions of a class of
	// goods (exemptions.go).
	Exemptions []exemption `json:"exemptions"`
	// Local is what of the region's local sales taxes and of its taxing
	// of shipping is modelled (local.go); nil: neither.
	Local *localRules `json:"local"`
}

type countryRates struct {
	Name           string                  `json:"name"`
	TaxName        string                  `json:"tax_name"`
	Currency       string                  `json:"currency"`
	Periods        []ratePeriod            `json:"periods"`
	RegionRequired bool                    `json:"region_required"`
	Regions        map[string]*regionRates `json:"regions"`
	Note           string                  `json:"note"`
	Source         string                  `json:"source"`
	// Coverage says what of the country's consumption taxes is modelled
	// and what is not (read by people and docs, not by the engine).
	Coverage string `json:"coverage"`
	// LocalSalesTax: the country's regions may add local sales taxes
	// (the US); each region's `local` says what of them is modelled.
	LocalSalesTax bool `json:"local_sales_tax"`
}

type ratesFile struct {
	header
	EUMembers []string                 `json:"eu_members"`
	Countries map[string]*countryRates `json:"countries"`
}

// ---- deminimis.json ----

type override struct {
	ShipFrom []string `json:"ship_from"`
	// Channel, when set, limits the override to parcels declared through
	// that channel (Canada: CUSMA thresholds for courier imports only).
	Channel     Channel `json:"channel"`
	DutyFreeMax *string `json:"duty_free_max"`
	TaxFreeMax  *string `json:"tax_free_max"`
	Note        string  `json:"note"`
	// Source is the primary source of the override; the Threshold cites
	// it when the override applied.
	Source string `json:"source"`
}

type regimePeriod struct {
	From             day        `json:"from"`
	Scheme           string     `json:"scheme"`
	DutyFreeMax      *string    `json:"duty_free_max"`
	DutyBasis        string     `json:"duty_basis"`
	Strict           bool       `json:"strict"`
	TaxFreeMax       *string    `json:"tax_free_max"`
	TaxMinAmount     *string    `json:"tax_min_amount"`
	CheckoutTaxMax   *string    `json:"checkout_tax_max"`
	CheckoutBasis    string     `json:"checkout_tax_basis"`
	LowValueExcluded []string   `json:"low_value_excluded_chapters"`
	IneligibleOrigin []string   `json:"ineligible_origins"`
	FlatDuty         *flatDuty  `json:"flat_duty"`
	Overrides        []override `json:"overrides"`
	Notes            []string   `json:"notes"`
	Source           string     `json:"source"`
}

type flatDuty struct {
	Amount string `json:"amount"`
	Per    string `json:"per"`
	Until  day    `json:"until"`
}

type regime struct {
	Name                string         `json:"name"`
	Currency            string         `json:"currency"`
	Valuation           string         `json:"valuation"` // CIF | FOB
	TaxIncludesShipping bool           `json:"tax_base_includes_shipping"`
	SalesTaxAtCheckout  bool           `json:"sales_tax_at_checkout"`
	PersonalUseFactor   string         `json:"personal_use_factor"`
	ThresholdWithShip   bool           `json:"threshold_includes_shipping"`
	Periods             []regimePeriod `json:"periods"`

	factor *big.Rat
}

type deminimisFile struct {
	header
	NoteTexts map[string]string  `json:"note_texts"`
	Regimes   map[string]*regime `json:"regimes"`
}

// ---- duty.json ----

type chapterRate struct {
	Rate     money.Rate `json:"rate"`
	Range    string     `json:"range"`
	Example  string     `json:"example"`
	Specific bool       `json:"specific"`
}

type chapterRange struct {
	From string `json:"from"`
	To   string `json:"to"`
	chapterRate
}

type dutyGroup struct {
	Tariff        string                  `json:"tariff"`
	Source        string                  `json:"source"`
	Default       money.Rate              `json:"default"`
	Chapters      map[string]*chapterRate `json:"chapters"`
	ChapterRanges []chapterRange          `json:"chapter_ranges"`
}

type agreement struct {
	ID     string   `json:"id"`
	A      []string `json:"a"`
	B      []string `json:"b"`
	From   day      `json:"from"`
	Source string   `json:"source"`
}

type dutyFile struct {
	header
	EUMembers  []string              `json:"eu_members"`
	Groups     map[string]*dutyGroup `json:"groups"`
	Agreements []agreement           `json:"agreements"`
}

// ---- fx.json ----

type fxFile struct {
	header
	Base  string            `json:"base"`
	Rates map[string]string `json:"rates"`
}

var (
	// schemeRE is a scheme label: a short stable code such as "IOSS",
	// "VOEC" or "UK-LVC", never a sentence (a sentence broke the output
	// schema's maxLength once).
	schemeRE   = regexp.MustCompile(`^[A-Z]{2,6}(?:-[A-Z0-9]{2,6})?$`)
	hsPrefixRE = regexp.MustCompile(`^[0-9]{2,6}$`)
)

// rules is the loaded, validated rule set.
type rules struct {
	version string
	sources []string
	eu      map[string]bool
	rates   map[string]*countryRates
	notes   map[string]string
	regimes map[string]*regime
	duty    *dutyFile
	fx      map[string]*big.Rat // units per 1 EUR
}

func readJSON(name string, h *header, v any) error {
	raw, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("tax: data/%s: %w", name, err)
	}
	if !strings.HasPrefix(h.RulesetVersion, "tax-") || len(h.Sources) == 0 {
		return fmt.Errorf("tax: data/%s lacks ruleset_version or sources", name)
	}
	for _, s := range h.Sources {
		if !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("tax: data/%s: source %q is not an https URL", name, s)
		}
	}
	return nil
}

var load = sync.OnceValues(func() (*rules, error) {
	var rf ratesFile
	var df deminimisFile
	var uf dutyFile
	var ff fxFile
	for _, f := range []struct {
		name string
		h    *header
		v    any
	}{{"rates.json", &rf.header, &rf}, {"deminimis.json", &df.header, &df}, {"duty.json", &uf.header, &uf}, {"fx.json", &ff.header, &ff}} {
		if err := readJSON(f.name, f.h, f.v); err != nil {
			return nil, err
		}
	}
	v := rf.RulesetVersion
	if df.RulesetVersion != v || uf.RulesetVersion != v || ff.RulesetVersion != v {
		return nil, fmt.Errorf("tax: data files disagree on ruleset_version")
	}
	if !slices.Equal(rf.EUMembers, uf.EUMembers) || len(rf.EUMembers) != 27 {
		return nil, fmt.Errorf("tax: EU member lists disagree or are not 27")
	}
	r := &rules{version: v, eu: map[string]bool{}, rates: rf.Countries, notes: df.NoteTexts, regimes: df.Regimes, duty: &uf, fx: map[string]*big.Rat{}}
	for _, h := range []header{rf.header, df.header, uf.header, ff.header} {
		r.sources = append(r.sources, h.Sources...)
	}
	for _, c := range rf.EUMembers {
		r.eu[c] = true
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	if ff.Base != "EUR" {
		return nil, fmt.Errorf("tax: fx base must be EUR")
	}
	for c, s := range ff.Rates {
		q, ok := new(big.Rat).SetString(s)
		if !ok || q.Sign() <= 0 || !money.Known(c) {
			return nil, fmt.Errorf("tax: fx rate %s=%q", c, s)
		}
		r.fx[c] = q
	}
	return r, nil
})

// validate checks the cross-file invariants: every EU member and every
// rate country has a regime and a duty tariff, periods are in date order,
// currencies are known, note codes have texts.
func (r *rules) validate() error {
	sorted := func(ps []ratePeriod) bool {
		return sort.SliceIsSorted(ps, func(i, j int) bool { return ps[i].From.Before(ps[j].From.Time) })
	}
	for cc, c := range r.rates {
		if !money.Known(c.Currency) {
			return fmt.Errorf("tax: %s currency %q", cc, c.Currency)
		}
		if !sorted(c.Periods) {
			return fmt.Errorf("tax: %s periods out of order", cc)
		}
		for rc, rg := range c.Regions {
			if rg.Mode != "add" && rg.Mode != "replace" && rg.Mode != "none" && rg.Mode != "unsupported" {
				return fmt.Errorf("tax: %s-%s mode %q", cc, rc, rg.Mode)
			}
			if rg.Mode == "unsupported" && (rg.Note == "" || len(rg.Periods) > 0) {
				return fmt.Errorf("tax: %s-%s: an unsupported region has a note and no rates", cc, rc)
			}
			needRates := rg.Mode == "add" || rg.Mode == "replace"
			if !sorted(rg.Periods) || (needRates && len(rg.Periods) == 0) {
				return fmt.Errorf("tax: %s-%s periods", cc, rc)
			}
			for i := range rg.Exemptions {
				if err := rg.Exemptions[i].check(cc+"-"+rc, c.Currency); err != nil {
					return err
				}
			}
			if rg.Local != nil {
				if err := rg.Local.check(cc+"-"+rc, rg); err != nil {
					return err
				}
			}
		}
		if c.RegionRequired && len(c.Regions) == 0 {
			return fmt.Errorf("tax: %s requires regions but lists none", cc)
		}
		if _, err := r.regimeFor(cc); err != nil {
			return err
		}
		if _, err := r.dutyGroup(cc); err != nil {
			return err
		}
	}
	for cc := range r.eu {
		if _, ok := r.rates[cc]; !ok {
			return fmt.Errorf("tax: EU member %s has no rates", cc)
		}
	}
	for key, g := range r.regimes {
		if !money.Known(g.Currency) || (g.Valuation != "CIF" && g.Valuation != "FOB") {
			return fmt.Errorf("tax: regime %s currency/valuation", key)
		}
		if g.PersonalUseFactor != "" {
			q, ok := new(big.Rat).SetString(g.PersonalUseFactor)
			if !ok || q.Sign() <= 0 || q.Cmp(big.NewRat(1, 1)) > 0 {
				return fmt.Errorf("tax: regime %s factor", key)
			}
			g.factor = q
		}
		for i, p := range g.Periods {
			if i > 0 && !p.From.After(g.Periods[i-1].From.Time) {
				return fmt.Errorf("tax: regime %s periods out of order", key)
			}
			for _, a := range []*string{p.DutyFreeMax, p.TaxFreeMax, p.TaxMinAmount, p.CheckoutTaxMax} {
				if a != nil {
					if _, err := money.ParseMajor(*a, g.Currency); err != nil {
						return fmt.Errorf("tax: regime %s: %w", key, err)
					}
				}
			}
			if p.Scheme != "" && !schemeRE.MatchString(p.Scheme) {
				return fmt.Errorf("tax: regime %s: scheme %q is not a short label (%s)", key, p.Scheme, schemeRE)
			}
			for _, x := range p.LowValueExcluded {
				if !hsPrefixRE.MatchString(x) {
					return fmt.Errorf("tax: regime %s: excluded HS prefix %q", key, x)
				}
			}
			for _, n := range p.Notes {
				if r.notes[n] == "" {
					return fmt.Errorf("tax: regime %s: note %s has no text", key, n)
				}
			}
			for _, o := range p.Overrides {
				if o.Note != "" && r.notes[o.Note] == "" {
					return fmt.Errorf("tax: regime %s: note %s has no text", key, o.Note)
				}
				if o.Channel != "" && o.Channel != ChannelPostal && o.Channel != ChannelCourier {
					return fmt.Errorf("tax: regime %s: override channel %q", key, o.Channel)
				}
				if o.Channel != "" && o.Source == "" {
					return fmt.Errorf("tax: regime %s: a channel override needs its source", key)
				}
			}
		}
	}
	return nil
}

// regimeKey maps a destination to its import regime: EU members share one.
func (r *rules) regimeKey(country string) string {
	if r.eu[country] {
		return "EU"
	}
	return country
}

func (r *rules) regimeFor(country string) (*regime, error) {
	g, ok := r.regimes[r.regimeKey(country)]
	if !ok {
		return nil, fmt.Errorf("%w: no import regime for %s", ErrUnsupportedDestination, country)
	}
	return g, nil
}

func (r *rules) dutyGroup(country string) (*dutyGroup, error) {
	g, ok := r.duty.Groups[r.regimeKey(country)]
	if !ok {
		return nil, fmt.Errorf("%w: no tariff for %s", ErrUnsupportedDestination, country)
	}
	return g, nil
}

// note builds a Note from a code in the data's note texts.
func (r *rules) note(code string) Note { return Note{Code: code, Message: r.notes[code]} }
