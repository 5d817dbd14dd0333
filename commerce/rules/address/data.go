package address

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

//go:embed data/*.json
var dataFS embed.FS

type file struct {
	RulesetVersion string                   `json:"ruleset_version"`
	AsOf           string                   `json:"as_of"`
	Sources        []string                 `json:"sources"`
	ISO            []string                 `json:"iso3166_alpha2"`
	Countries      map[string]*countryRules `json:"countries"`
}

type countryRules struct {
	Name   string       `json:"name"`
	Postal *postalRules `json:"postal"`
	Region *regionRules `json:"region"`
}

type postalRules struct {
	Pattern  string `json:"pattern"`
	Example  string `json:"example"`
	Required bool   `json:"required"`
	// Layout is the canonical shape of a fixed-length code: X is the next
	// character of the code, anything else is inserted literally ("XXX XX",
	// "XXXX-XXX", "LV-XXXX").
	Layout string `json:"layout"`
	// SplitLast puts one space before the last N characters (GB inward
	// code, Malta), for codes of variable length.
	SplitLast int `json:"split_last"`

	re *regexp.Regexp
}

type regionRules struct {
	Required bool `json:"required"`
	// PostalMismatch is the severity of a region the postal code
	// contradicts: SeverityError where the region decides the tax (US,
	// CA), SeverityWarning (the default) elsewhere.
	PostalMismatch string   `json:"postal_mismatch"`
	Values         []region `json:"values"`
}

type region struct {
	Code           string      `json:"code"`
	Name           string      `json:"name"`
	PostalPrefixes []string    `json:"postal_prefixes"`
	PostalRanges   [][2]string `json:"postal_ranges"`
}

type ruleTable struct {
	version   string
	sources   []string
	iso       map[string]bool
	countries map[string]*countryRules
	sorted    []string
}

var rules = sync.OnceValues(func() (*ruleTable, error) {
	raw, err := dataFS.ReadFile("data/countries.json")
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("address: data/countries.json: %w", err)
	}
	if !strings.HasPrefix(f.RulesetVersion, "address-") || len(f.Sources) == 0 {
		return nil, fmt.Errorf("address: data lacks ruleset_version or sources")
	}
	t := &ruleTable{version: f.RulesetVersion, sources: f.Sources, iso: map[string]bool{}, countries: f.Countries}
	for _, c := range f.ISO {
		t.iso[c] = true
	}
	for cc, c := range f.Countries {
		if !t.iso[cc] {
			return nil, fmt.Errorf("address: %s is not ISO 3166-1", cc)
		}
		if c.Postal != nil {
			if c.Postal.re, err = regexp.Compile(c.Postal.Pattern); err != nil {
				return nil, fmt.Errorf("address: %s pattern: %w", cc, err)
			}
			if !c.Postal.re.MatchString(c.Postal.canonical(firstExample(c.Postal.Example))) {
				return nil, fmt.Errorf("address: %s example %q does not match its own pattern", cc, c.Postal.Example)
			}
		}
		if c.Region != nil && len(c.Region.Values) == 0 {
			return nil, fmt.Errorf("address: %s has a region rule without values", cc)
		}
		if c.Region != nil {
			switch c.Region.PostalMismatch {
			case "":
				c.Region.PostalMismatch = SeverityWarning
			case SeverityWarning, SeverityError:
			default:
				return nil, fmt.Errorf("address: %s postal_mismatch %q", cc, c.Region.PostalMismatch)
			}
		}
		t.sorted = append(t.sorted, cc)
	}
	sort.Strings(t.sorted)
	return t, nil
})

// firstExample takes "94105 or 94105-1234" → "94105".
func firstExample(s string) string {
	first, _, _ := strings.Cut(s, " or ")
	return first
}

// canonical upper-cases the code, collapses inner white space and applies
// the layout or split rule when the code's characters fit it. A code that
// does not fit is returned upper-cased, to fail the pattern check.
func (p *postalRules) canonical(s string) string {
	s = strings.Join(strings.Fields(strings.ToUpper(s)), " ")
	bare := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s)
	switch {
	case p.Layout != "":
		// A literal letter prefix of the layout ("LV", "L") is optional
		// in the input.
		prefix := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) {
				return r
			}
			return -1
		}, p.Layout[:strings.IndexByte(p.Layout+"X", 'X')])
		bare = strings.TrimPrefix(bare, prefix)
		if strings.Count(p.Layout, "X") != len(bare) || !isASCII(bare) {
			return s
		}
		var b strings.Builder
		i := 0
		for _, r := range p.Layout {
			if r == 'X' {
				b.WriteByte(bare[i])
				i++
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	case p.SplitLast > 0 && len(bare) > p.SplitLast && isASCII(bare):
		return bare[:len(bare)-p.SplitLast] + " " + bare[len(bare)-p.SplitLast:]
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lookup finds a region by code or by name, case-insensitively.
func (rr *regionRules) lookup(s string) (*region, bool) {
	for i := range rr.Values {
		r := &rr.Values[i]
		if strings.EqualFold(r.Code, s) || strings.EqualFold(r.Name, s) {
			return r, true
		}
	}
	return nil, false
}

// hasPostalData reports whether the region lists postal prefixes or
// ranges (only those can be derived from, or contradicted by, a postcode).
func (r *region) hasPostalData() bool {
	return len(r.PostalPrefixes) > 0 || len(r.PostalRanges) > 0
}

// regionsOf returns the regions whose postal data matches a canonical
// postal code.
func (rr *regionRules) regionsOf(code string) []*region {
	var out []*region
	for i := range rr.Values {
		if r := &rr.Values[i]; r.hasPostalData() && r.matchesPostal(code) {
			out = append(out, r)
		}
	}
	return out
}

// matchesPostal is the coarse region/postcode consistency check. A region
// without prefix or range data matches everything.
func (r *region) matchesPostal(code string) bool {
	if len(r.PostalPrefixes) == 0 && len(r.PostalRanges) == 0 {
		return true
	}
	for _, p := range r.PostalPrefixes {
		if strings.HasPrefix(code, p) {
			return true
		}
	}
	for _, rg := range r.PostalRanges {
		if len(code) >= len(rg[0]) {
			head := code[:len(rg[0])]
			if head >= rg[0] && head <= rg[1] {
				return true
			}
		}
	}
	return false
}
