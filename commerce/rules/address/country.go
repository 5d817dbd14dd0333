package address

import (
	"fmt"
	"sort"
	"strings"
)

// country applies the country-specific rules: postal code, region.
func (v *validator) country(c *countryRules, a Address) {
	postal := strings.TrimSpace(a.PostalCode)
	switch {
	case c.Postal == nil:
		if postal != "" && !v.has(FieldPostalCode) {
			v.add(FieldPostalCode, CodeNotUsed, SeverityWarning, c.Name+" does not use postal codes; it will be ignored")
		}
	case postal == "":
		if c.Postal.Required && !v.has(FieldPostalCode) {
			v.add(FieldPostalCode, CodeRequired, SeverityError, fmt.Sprintf("postal code is required in %s (e.g. %s)", c.Name, c.Postal.Example))
		}
	case !v.has(FieldPostalCode):
		if !c.Postal.re.MatchString(c.Postal.canonical(postal)) {
			v.add(FieldPostalCode, CodeInvalidFormat, SeverityError, fmt.Sprintf("postal code must look like %s in %s", c.Postal.Example, c.Name))
		}
	}

	if c.Region == nil || v.has(FieldRegion) {
		return
	}
	region := strings.TrimSpace(a.Region)
	if region == "" {
		if c.Region.Required {
			v.add(FieldRegion, CodeRequired, SeverityError, fmt.Sprintf("region (state/province) is required in %s", c.Name))
		}
		return
	}
	r, ok := c.Region.lookup(region)
	if !ok {
		v.add(FieldRegion, CodeUnknownRegion, SeverityError, fmt.Sprintf("region must be one of the %d %s codes, e.g. %s", len(c.Region.Values), c.Name, c.Region.Values[0].Code))
		return
	}
	if c.Postal != nil && postal != "" && !v.has(FieldPostalCode) && !r.matchesPostal(c.Postal.canonical(postal)) {
		if c.Region.PostalMismatch == SeverityError {
			// Both fields are named: either may be the wrong one, and the
			// tax follows the region, so neither may be guessed.
			msg := fmt.Sprintf("postal code and region contradict each other: the postal code is not in %s; correct the region or the postal code", r.Code)
			v.add(FieldPostalCode, CodeRegionMismatch, SeverityError, msg)
			v.add(FieldRegion, CodeRegionMismatch, SeverityError, msg)
			return
		}
		v.add(FieldPostalCode, CodeRegionMismatch, SeverityWarning, fmt.Sprintf("postal code does not usually belong to %s", r.Code))
	}
}

// Resolve normalises a (see Normalize), fills a missing region from the
// postal code when exactly one region's postal data matches it (Canadian
// FSA letters, Australian ranges; never a guess between several), and
// validates the result. A derived region is reported as a warning
// (CodeRegionDerived on the region field), so callers can tell the user.
func Resolve(a Address) (Address, []Problem) {
	n := Normalize(a)
	var derived []Problem
	if t, err := rules(); err == nil {
		c, ok := t.countries[n.Country]
		if ok && c.Region != nil && c.Postal != nil && n.Region == "" && n.PostalCode != "" && c.Postal.re.MatchString(n.PostalCode) {
			if rs := c.Region.regionsOf(n.PostalCode); len(rs) == 1 {
				n.Region = rs[0].Code
				derived = append(derived, Problem{Field: FieldRegion, Code: CodeRegionDerived, Severity: SeverityWarning,
					Message: fmt.Sprintf("region %s was derived from the postal code", rs[0].Code)})
			}
		}
	}
	problems := append(Validate(n), derived...)
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].Field != problems[j].Field {
			return problems[i].Field < problems[j].Field
		}
		return problems[i].Code < problems[j].Code
	})
	return n, problems
}

// Normalize returns a copy of a with surrounding space trimmed, the
// country upper-cased, the postal code in its canonical form (upper case,
// national spacing: "sw1a1aa" → "SW1A 1AA", "1012ab" → "1012 AB",
// "1000001" in JP → "100-0001") and a region name replaced by its code
// ("California" → "CA"). It does not validate: call Validate on the result.
func Normalize(a Address) Address {
	out := Address{
		Name:       strings.TrimSpace(a.Name),
		Line1:      strings.TrimSpace(a.Line1),
		Line2:      strings.TrimSpace(a.Line2),
		City:       strings.TrimSpace(a.City),
		Region:     strings.TrimSpace(a.Region),
		PostalCode: strings.TrimSpace(a.PostalCode),
		Country:    strings.ToUpper(strings.TrimSpace(a.Country)),
	}
	t, err := rules()
	if err != nil {
		return out
	}
	c, ok := t.countries[out.Country]
	if !ok {
		out.PostalCode = strings.ToUpper(out.PostalCode)
		return out
	}
	if c.Postal != nil && out.PostalCode != "" {
		out.PostalCode = c.Postal.canonical(out.PostalCode)
	}
	if c.Region != nil && out.Region != "" {
		if r, ok := c.Region.lookup(out.Region); ok {
			out.Region = r.Code
		}
	}
	return out
}

// Regions lists the region codes of a country that has a validated list
// (US, CA, AU), or nil.
func Regions(country string) []string {
	t, err := rules()
	if err != nil {
		return nil
	}
	c, ok := t.countries[strings.ToUpper(country)]
	if !ok || c.Region == nil {
		return nil
	}
	out := make([]string, len(c.Region.Values))
	for i, r := range c.Region.Values {
		out[i] = r.Code
	}
	return out
}

// RequiresRegion reports whether addresses in country must carry a region.
func RequiresRegion(country string) bool {
	t, err := rules()
	if err != nil {
		return false
	}
	c, ok := t.countries[strings.ToUpper(country)]
	return ok && c.Region != nil && c.Region.Required
}

// Example returns the country's example postal code in canonical form
// ("" when the country uses none or has no rules here); tests build a
// valid address per country from it.
func Example(country string) string {
	t, err := rules()
	if err != nil {
		return ""
	}
	c, ok := t.countries[strings.ToUpper(country)]
	if !ok || c.Postal == nil {
		return ""
	}
	return c.Postal.canonical(firstExample(c.Postal.Example))
}

// RegionsFor lists, in data order, the region codes of country whose
// postal data matches the postal code (regions without postal data are
// left out); nil when the country has no region list.
func RegionsFor(country, postal string) []string {
	t, err := rules()
	if err != nil {
		return nil
	}
	c, ok := t.countries[strings.ToUpper(country)]
	if !ok || c.Region == nil || c.Postal == nil {
		return nil
	}
	var out []string
	for _, r := range c.Region.regionsOf(c.Postal.canonical(postal)) {
		out = append(out, r.Code)
	}
	return out
}

// SamplePostalCode builds a well-formed postal code of a region from its
// postal data: the first prefix (or range start) completed with the
// country's example ("" when the region has no postal data). Tests use it
// to build a consistent address per region; it is not a real address.
func SamplePostalCode(country, region string) string {
	t, err := rules()
	if err != nil {
		return ""
	}
	c, ok := t.countries[strings.ToUpper(country)]
	if !ok || c.Region == nil || c.Postal == nil {
		return ""
	}
	r, ok := c.Region.lookup(region)
	if !ok {
		return ""
	}
	ex := c.Postal.canonical(firstExample(c.Postal.Example))
	switch {
	case len(r.PostalPrefixes) > 0 && len(r.PostalPrefixes[0]) <= len(ex):
		return c.Postal.canonical(r.PostalPrefixes[0] + ex[len(r.PostalPrefixes[0]):])
	case len(r.PostalRanges) > 0:
		return c.Postal.canonical(r.PostalRanges[0][0])
	}
	return ""
}
