package address

import (
	"strings"
	"testing"
)

func base(country, region, postal string) Address {
	return Address{Name: "A. Person", Line1: "1 Main Street", City: "Town", Region: region, PostalCode: postal, Country: country}
}

// codes returns "field:CODE" for each error-severity problem.
func codes(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p.Field+":"+p.Code)
		}
	}
	return out
}

func TestPostalFormatsValid(t *testing.T) {
	valid := []struct{ country, region, postal string }{
		{"US", "CA", "94105"}, {"US", "NY", "10001-1234"}, {"US", "TX", "88510"},
		{"CA", "ON", "K1A 0B1"}, {"CA", "BC", "v6b4y8"}, {"CA", "QC", "H3Z 2Y7"},
		{"GB", "", "SW1A 1AA"}, {"GB", "", "m11ae"}, {"GB", "", "EC1A 1BB"}, {"GB", "", "B33 8TH"},
		{"DE", "", "10115"}, {"NL", "", "1012 AB"}, {"NL", "", "1012ab"},
		{"JP", "", "100-0001"}, {"JP", "", "1000001"},
		{"AU", "NSW", "2000"}, {"AU", "VIC", "3000"}, {"AU", "ACT", "2600"},
		{"BR", "", "01310-100"}, {"IN", "", "110001"}, {"IE", "", "D02 X285"}, {"IE", "", "d6wfh30"},
		{"FR", "", "75001"}, {"IT", "", "00184"}, {"ES", "", "28001"}, {"PT", "", "1000-001"},
		{"PL", "", "00-950"}, {"SE", "", "11122"}, {"CZ", "", "110 00"}, {"AT", "", "1010"},
		{"CH", "", "8001"}, {"NO", "", "0150"}, {"NZ", "", "6011"}, {"KR", "", "03154"},
		{"SG", "", "018956"}, {"LV", "", "1050"}, {"LV", "", "LV-1050"}, {"LU", "", "L-1111"},
		{"MT", "", "VLT1117"}, {"HK", "", ""}, {"IE", "", ""}, {"FI", "", "00100"}, {"GR", "", "10557"},
		{"EE", "", "10111"}, {"RO", "", "010011"}, {"HU", "", "1051"}, {"SK", "", "81101"},
	}
	for _, v := range valid {
		if got := codes(Validate(base(v.country, v.region, v.postal))); len(got) != 0 {
			t.Errorf("%s %q %q: unexpected %v", v.country, v.region, v.postal, got)
		}
	}
}

func TestPostalFormatsInvalid(t *testing.T) {
	invalid := []struct{ country, region, postal string }{
		{"US", "CA", "9410"}, {"US", "CA", "94105-12"}, {"US", "CA", "ABCDE"},
		{"CA", "ON", "D1A 0B1"}, {"CA", "ON", "K1A0B"}, {"CA", "ON", "12345"},
		{"GB", "", "SW1A"}, {"GB", "", "12345"}, {"GB", "", "SW1A 1AI"},
		{"DE", "", "1011"}, {"DE", "", "101155"}, {"NL", "", "0123 AB"}, {"NL", "", "1012 SA"},
		{"JP", "", "100-001"}, {"AU", "NSW", "200"}, {"BR", "", "0131-100"},
		{"IN", "", "011001"}, {"IE", "", "B02 X285"}, {"ES", "", "53001"}, {"PT", "", "1000"},
		{"SE", "", "01122"}, {"CH", "", "0800"}, {"SG", "", "01895"}, {"KR", "", "0315"},
	}
	for _, v := range invalid {
		got := codes(Validate(base(v.country, v.region, v.postal)))
		if len(got) != 1 || got[0] != "postal_code:INVALID_FORMAT" {
			t.Errorf("%s %q: got %v, want postal_code:INVALID_FORMAT", v.country, v.postal, got)
		}
	}
}

func TestRequiredFieldsAndRegions(t *testing.T) {
	got := codes(Validate(Address{}))
	want := "city:REQUIRED country:REQUIRED line1:REQUIRED name:REQUIRED"
	if strings.Join(got, " ") != want {
		t.Errorf("empty address: %v", got)
	}
	// US, CA, AU need a region from their list.
	for _, cc := range []string{"US", "CA", "AU"} {
		if !RequiresRegion(cc) {
			t.Errorf("%s should require a region", cc)
		}
	}
	if got := codes(Validate(base("US", "", "94105"))); strings.Join(got, " ") != "region:REQUIRED" {
		t.Errorf("US without state: %v", got)
	}
	if got := codes(Validate(base("US", "XX", "94105"))); strings.Join(got, " ") != "region:UNKNOWN_REGION" {
		t.Errorf("US bad state: %v", got)
	}
	if got := codes(Validate(base("CA", "ZZ", "K1A 0B1"))); strings.Join(got, " ") != "region:UNKNOWN_REGION" {
		t.Errorf("CA bad province: %v", got)
	}
	if got := codes(Validate(base("AU", "Tasmania", "7000"))); len(got) != 0 {
		t.Errorf("AU region by name: %v", got)
	}
	if got := codes(Validate(base("DE", "", ""))); strings.Join(got, " ") != "postal_code:REQUIRED" {
		t.Errorf("DE without postcode: %v", got)
	}
	if got := codes(Validate(base("XX", "", "1"))); strings.Join(got, " ") != "country:UNKNOWN_COUNTRY" {
		t.Errorf("bad country: %v", got)
	}
	if len(Regions("US")) != 59 || len(Regions("CA")) != 13 || len(Regions("AU")) != 8 {
		t.Errorf("region counts US %d CA %d AU %d", len(Regions("US")), len(Regions("CA")), len(Regions("AU")))
	}
}

// The rules side of the region regression (commerce/regressions_test.go):
// where the region decides the tax (US, CA) a
// region the postcode contradicts is an error on both fields; in AU it
// stays a warning (GST is national, some postcodes cross state borders).
func TestRegionContradictsPostcode(t *testing.T) {
	for _, a := range []Address{
		base("CA", "AB", "K1A 0B1"), // Ottawa (ON) with Alberta: GST 5 % instead of HST 13 %
		base("CA", "BC", "K1A 0B1"),
		base("US", "OR", "10001"), // New York ZIP with Oregon: no sales tax instead of NY's
		base("US", "CA", "10001"),
	} {
		ps := Validate(a)
		if got := strings.Join(codes(ps), " "); got != "postal_code:REGION_POSTAL_MISMATCH region:REGION_POSTAL_MISMATCH" {
			t.Errorf("%s %s %s: %s, want an error naming postal_code and region", a.Country, a.Region, a.PostalCode, got)
			continue
		}
		for _, p := range ps {
			if strings.Contains(p.Message, a.PostalCode) {
				t.Errorf("%+v: code, or the message quotes the postal code", p)
			}
		}
	}
	ps := Validate(base("AU", "VIC", "2000"))
	if len(ps) != 1 || ps[0].Code != CodeRegionMismatch || ps[0].Severity != SeverityWarning {
		t.Errorf("AU mismatch: %+v", ps)
	}
	for _, a := range []Address{base("US", "TX", "88510"), base("US", "NY", "10001"), base("CA", "ON", "K1A 0B1"),
		base("AU", "SA", "0872"), base("AU", "NT", "0872")} {
		if ps := Validate(a); len(ps) != 0 {
			t.Errorf("%s %s %s flagged: %+v", a.Country, a.Region, a.PostalCode, ps)
		}
	}
}

// A missing region is derived from the postcode only when
// exactly one region matches, and the derivation is reported.
func TestRegionDerivedFromPostcode(t *testing.T) {
	for _, c := range []struct {
		country, postal, want string
	}{
		{"CA", "K1A 0B1", "ON"}, {"CA", "h2y1c6", "QC"}, {"CA", "T2P 1J9", "AB"}, {"AU", "3000", "VIC"}, {"AU", "2600", "ACT"},
	} {
		n, ps := Resolve(base(c.country, "", c.postal))
		if n.Region != c.want || len(ps) != 1 || ps[0].Code != CodeRegionDerived || ps[0].Severity != SeverityWarning {
			t.Errorf("%s %s: region %q, problems %+v; want %s derived", c.country, c.postal, n.Region, ps, c.want)
		}
	}
	// Ambiguous: X is NT or NU; 0872 is NT, SA or WA; a US ZIP's first
	// digit covers several states. The region stays required.
	for _, a := range []Address{base("CA", "", "X1A 2B3"), base("AU", "", "0872"), base("US", "", "10001")} {
		n, ps := Resolve(a)
		if n.Region != "" || len(ps) != 1 || ps[0].Code != CodeRequired || ps[0].Field != FieldRegion {
			t.Errorf("%s %s: region %q, problems %+v", a.Country, a.PostalCode, n.Region, ps)
		}
	}
	// A region given is never replaced, even when it contradicts.
	if n, ps := Resolve(base("CA", "AB", "K1A 0B1")); n.Region != "AB" || len(ps) != 2 {
		t.Errorf("given region: %q %+v", n.Region, ps)
	}
	// An invalid postcode derives nothing.
	if n, _ := Resolve(base("CA", "", "K1A")); n.Region != "" {
		t.Errorf("derived %q from an invalid postcode", n.Region)
	}
}

// No postal operator assigns US ZIP 00000 or
// German PLZ 00000.
func TestUnassignedPostcodesRefused(t *testing.T) {
	for _, a := range []Address{base("US", "NY", "00000"), base("US", "NY", "00499"), base("US", "NY", "00000-1234"),
		base("DE", "", "00000"), base("DE", "", "00999")} {
		if got := strings.Join(codes(Validate(a)), " "); got != "postal_code:INVALID_FORMAT" {
			t.Errorf("%s %s accepted or wrong problem: %s", a.Country, a.PostalCode, got)
		}
	}
	for _, a := range []Address{base("US", "NY", "00501"), base("US", "PR", "00901"), base("US", "MA", "02134"),
		base("DE", "", "01067"), base("DE", "", "99998")} {
		if got := codes(Validate(a)); len(got) != 0 {
			t.Errorf("%s %s: %v", a.Country, a.PostalCode, got)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct{ in, out Address }{
		{Address{Country: "gb", PostalCode: " sw1a1aa "}, Address{Country: "GB", PostalCode: "SW1A 1AA"}},
		{Address{Country: "NL", PostalCode: "1012ab"}, Address{Country: "NL", PostalCode: "1012 AB"}},
		{Address{Country: "JP", PostalCode: "1000001"}, Address{Country: "JP", PostalCode: "100-0001"}},
		{Address{Country: "CA", PostalCode: "k1a0b1", Region: "Ontario"}, Address{Country: "CA", PostalCode: "K1A 0B1", Region: "ON"}},
		{Address{Country: "US", Region: "california"}, Address{Country: "US", Region: "CA"}},
		{Address{Country: "LV", PostalCode: "1050"}, Address{Country: "LV", PostalCode: "LV-1050"}},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.out {
			t.Errorf("Normalize(%+v) = %+v, want %+v", c.in, got, c.out)
		}
	}
}

// Problems name fields and codes, never the submitted value.
func TestProblemsNeverQuoteValue(t *testing.T) {
	ps := Validate(base("US", "", "777"))
	if got := strings.Join(codes(ps), " "); got != "postal_code:INVALID_FORMAT region:REQUIRED" {
		t.Errorf("codes %s", got)
	}
	for _, p := range ps {
		if strings.Contains(p.Message, "777") {
			t.Errorf("problem leaks value: %+v", p)
		}
	}
}

func TestTextChecks(t *testing.T) {
	a := base("DE", "", "10115")
	a.Line1 = "Street\x00"
	a.City = strings.Repeat("x", 65)
	got := strings.Join(codes(Validate(a)), " ")
	if got != "city:TOO_LONG line1:INVALID_CHARACTERS" {
		t.Errorf("text checks: %s", got)
	}
	a = base("DE", "", "\xff\xfe")
	if got := strings.Join(codes(Validate(a)), " "); got != "postal_code:INVALID_CHARACTERS" {
		t.Errorf("invalid utf8: %s", got)
	}
}

func TestDataCoverage(t *testing.T) {
	tb, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	if tb.version != "address-2026.11.2" || len(tb.sources) == 0 {
		t.Fatalf("version %q sources %d", tb.version, len(tb.sources))
	}
	if len(tb.iso) != 249 {
		t.Errorf("ISO 3166-1 list has %d codes, want 249", len(tb.iso))
	}
	// Every tax destination has postal rules.
	for _, cc := range strings.Fields("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE GB CH NO US CA AU NZ JP KR SG BR IN") {
		if _, ok := tb.countries[cc]; !ok {
			t.Errorf("no rules for %s", cc)
		}
	}
}
