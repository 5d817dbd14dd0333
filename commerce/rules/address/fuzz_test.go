package address

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzValidate checks the properties every caller relies on, on arbitrary
// input: no panic, deterministic output, only known fields/codes/severities,
// and Normalize is idempotent and never turns
// a valid address invalid.
func FuzzValidate(f *testing.F) {
	f.Add("A", "1 Main St", "", "Springfield", "IL", "62701", "US")
	f.Add("B", "10 Downing St", "", "London", "", "SW1A2AA", "gb")
	f.Add("C", "x", "y", "z", "Ontario", "k1a0b1", "CA")
	f.Add("", "", "", "", "", "", "")
	f.Add("D", "\x00", "\xff", "東京", "東京都", "100-0001", "JP")
	f.Add("E", "l", "", "c", "", "LV-1050", "LV")
	fields := []string{FieldName, FieldLine1, FieldLine2, FieldCity, FieldRegion, FieldPostalCode, FieldCountry}
	known := []string{CodeRequired, CodeInvalidFormat, CodeUnknownCountry, CodeUnknownRegion, CodeTooLong, CodeInvalidCharacters, CodeRegionMismatch, CodeNoRules, CodeNotUsed}
	f.Fuzz(func(t *testing.T, name, l1, l2, city, region, postal, country string) {
		a := Address{Name: name, Line1: l1, Line2: l2, City: city, Region: region, PostalCode: postal, Country: country}
		p1 := Validate(a)
		p2 := Validate(a)
		if !slices.Equal(p1, p2) {
			t.Fatalf("not deterministic")
		}
		hasErr := false
		for _, p := range p1 {
			if !slices.Contains(fields, p.Field) || !slices.Contains(known, p.Code) {
				t.Fatalf("unknown field/code %+v", p)
			}
			if p.Severity != SeverityError && p.Severity != SeverityWarning {
				t.Fatalf("bad severity %+v", p)
			}
			if !utf8.ValidString(p.Message) {
				t.Fatalf("message not UTF-8: %q", p.Message)
			}
			hasErr = hasErr || p.Severity == SeverityError
		}
		n := Normalize(a)
		if Normalize(n) != n {
			t.Fatalf("Normalize not idempotent: %+v → %+v", n, Normalize(n))
		}
		if got := codes(Validate(n)); !hasErr && len(got) != 0 {
			t.Fatalf("normalising a valid address made it invalid: %v", got)
		}
	})
}
