package address

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Address is a postal address; commerce.Address is the same type, the one
// the tools and workflows carry. It is PII: tools validate it, use its
// country and postal code for rules, and never log or store it in clear.
type Address struct {
	// Name is the recipient's name (optional for quoting, needed to ship).
	Name  string `json:"name,omitempty"`
	Line1 string `json:"line1"`
	Line2 string `json:"line2,omitempty"`
	City  string `json:"city"`
	// Region is the state, province or prefecture code where the country
	// uses one (US "CA", CA "ON", AU "NSW") or its full name; US and CA
	// taxes depend on it.
	Region     string `json:"region,omitempty"`
	PostalCode string `json:"postal_code,omitempty"`
	// Country is the ISO 3166-1 alpha-2 code.
	Country string `json:"country"`
}

// Field names used in Problem.Field; they are the JSON names of Address.
const (
	FieldName       = "name"
	FieldLine1      = "line1"
	FieldLine2      = "line2"
	FieldCity       = "city"
	FieldRegion     = "region"
	FieldPostalCode = "postal_code"
	FieldCountry    = "country"
)

// Problem codes are stable identifiers a client can switch on.
const (
	CodeRequired          = "REQUIRED"
	CodeInvalidFormat     = "INVALID_FORMAT"
	CodeUnknownCountry    = "UNKNOWN_COUNTRY"
	CodeUnknownRegion     = "UNKNOWN_REGION"
	CodeTooLong           = "TOO_LONG"
	CodeInvalidCharacters = "INVALID_CHARACTERS"
	// CodeRegionMismatch: the postal code does not belong to the region
	// (coarse check). An error on both fields where the region decides
	// the tax (US, CA: a tax answer must never follow a region the
	// postcode contradicts), a warning elsewhere (AU, where some
	// postcodes cross state borders and GST is national).
	CodeRegionMismatch = "REGION_POSTAL_MISMATCH"
	// CodeRegionDerived: the region was missing and filled from the
	// postal code, which matched exactly one region (warning; Resolve).
	CodeRegionDerived = "REGION_FROM_POSTAL_CODE"
	// CodeNoRules: the country is valid ISO 3166 but has no postal rules
	// here; only generic checks ran (warning).
	CodeNoRules = "NO_COUNTRY_RULES"
	// CodeNotUsed: a postal code was given where the country has none
	// (warning; carriers ignore it).
	CodeNotUsed = "NOT_USED"
)

// Severity of a Problem.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Problem is one finding about one field.
type Problem struct {
	Field    string `json:"field"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	// Message explains the rule (e.g. the expected format with an example)
	// without quoting the submitted value.
	Message string `json:"message"`
}

// Field length limits (runes). They follow common carrier label limits
// loosely; anything longer is almost certainly not an address line.
const (
	maxLine   = 100
	maxCity   = 64
	maxRegion = 64
	maxPostal = 16
)

// Validate checks a and returns every problem found, errors and warnings,
// sorted by field then code. An empty slice means the address is valid.
// Validate never panics on any input.
func Validate(a Address) []Problem {
	t, err := rules()
	if err != nil {
		return []Problem{{Field: FieldCountry, Code: CodeNoRules, Severity: SeverityError, Message: "address rules unavailable: " + err.Error()}}
	}
	v := &validator{}
	v.text(FieldName, a.Name, maxLine, true)
	v.text(FieldLine1, a.Line1, maxLine, true)
	v.text(FieldLine2, a.Line2, maxLine, false)
	v.text(FieldCity, a.City, maxCity, true)
	v.text(FieldRegion, a.Region, maxRegion, false)
	v.text(FieldPostalCode, a.PostalCode, maxPostal, false)

	cc := strings.ToUpper(strings.TrimSpace(a.Country))
	switch {
	case cc == "":
		v.add(FieldCountry, CodeRequired, SeverityError, "country is required (ISO 3166-1 alpha-2, e.g. DE)")
	case !t.iso[cc]:
		v.add(FieldCountry, CodeUnknownCountry, SeverityError, "country must be an ISO 3166-1 alpha-2 code, e.g. DE, US, JP")
	default:
		c, ok := t.countries[cc]
		if !ok {
			v.add(FieldCountry, CodeNoRules, SeverityWarning, "no postal rules for this country; only required fields were checked")
			break
		}
		v.country(c, a)
	}
	sort.SliceStable(v.out, func(i, j int) bool {
		if v.out[i].Field != v.out[j].Field {
			return v.out[i].Field < v.out[j].Field
		}
		return v.out[i].Code < v.out[j].Code
	})
	return v.out
}

type validator struct{ out []Problem }

func (v *validator) add(field, code, sev, msg string) {
	v.out = append(v.out, Problem{Field: field, Code: code, Severity: sev, Message: msg})
}

// has reports whether field already has an error, so later checks of the
// same field do not pile on (a field with control characters is not also
// reported as a bad postal format).
func (v *validator) has(field string) bool {
	for _, p := range v.out {
		if p.Field == field && p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// text applies the checks every free-text field shares.
func (v *validator) text(field, s string, max int, required bool) {
	if strings.TrimSpace(s) == "" {
		if required {
			v.add(field, CodeRequired, SeverityError, field+" is required")
		}
		return
	}
	if !utf8.ValidString(s) {
		v.add(field, CodeInvalidCharacters, SeverityError, field+" is not valid UTF-8")
		return
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			v.add(field, CodeInvalidCharacters, SeverityError, field+" contains control characters")
			return
		}
	}
	if utf8.RuneCountInString(strings.TrimSpace(s)) > max {
		v.add(field, CodeTooLong, SeverityError, field+" is longer than the limit")
	}
}
