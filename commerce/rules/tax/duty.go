package tax

import (
	"slices"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// dutyBasis values of LineResult.DutyBasis.
const (
	basisNoImport     = "no_import"
	basisDeMinimis    = "de_minimis"
	basisFlat         = "flat_low_value"
	basisPreferential = "preferential"
	basisChapter      = "chapter_rate"
	basisDefault      = "default_rate"
)

// dutyLookup is the duty rate a line gets and why.
type dutyLookup struct {
	rate       money.Rate
	basis      string
	preference string
	specific   bool
	example    string
	// notDirect: an agreement covers origin and destination, but the
	// parcel ships from outside it, so no preference.
	notDirect bool
}

// normHS keeps the digits of an HS code ("6109.10.00" → "61091000").
func normHS(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		if r == '.' || r == ' ' || r == '-' {
			return -1
		}
		return 'x' // poison: not a code
	}, strings.TrimSpace(s))
}

// chapterOf returns the 2-digit chapter of a normalised code, or "".
func chapterOf(hs string) string {
	if len(hs) < 2 || strings.ContainsRune(hs, 'x') {
		return ""
	}
	ch := hs[:2]
	if ch < "01" || ch > "97" || ch == "77" {
		return ""
	}
	return ch
}

// lookupDuty finds the rate for a chapter in a destination's tariff, then
// applies a free-trade preference for industrial chapters (25-97) when
// the origin and the destination are parties to an agreement in force and
// the parcel ships from a party on the origin's side (direct transport:
// goods of US origin stocked in the German warehouse have left North
// America and get no CUSMA rate; see
// commerce/rules/README.md#canada-postal-and-courier-imports).
func (r *rules) lookupDuty(dest, origin, shipFrom, chapter string, at time.Time) (dutyLookup, error) {
	g, err := r.dutyGroup(dest)
	if err != nil {
		return dutyLookup{}, err
	}
	l := dutyLookup{rate: g.Default, basis: basisDefault}
	if c, ok := g.Chapters[chapter]; ok && chapter != "" {
		l = dutyLookup{rate: c.Rate, basis: basisChapter, specific: c.Specific, example: c.Example}
	} else {
		for _, cr := range g.ChapterRanges {
			if chapter != "" && chapter >= cr.From && chapter <= cr.To {
				l = dutyLookup{rate: cr.Rate, basis: basisChapter, specific: cr.Specific, example: cr.Example}
			}
		}
	}
	if chapter >= "25" && origin != "" {
		if a := r.agreementFor(origin, dest, at); a != "" {
			if r.sameSide(a, origin, shipFrom) {
				l.rate, l.basis, l.preference = 0, basisPreferential, a
			} else {
				l.notDirect = true
			}
		}
	}
	return l, nil
}

// agreementFor returns the id of an agreement in force between the origin
// and the destination, or "".
func (r *rules) agreementFor(origin, dest string, at time.Time) string {
	in := func(list []string, c string) bool {
		return slices.Contains(list, c) || (slices.Contains(list, "EU") && r.eu[c])
	}
	if origin == dest || (r.eu[origin] && r.eu[dest]) {
		return ""
	}
	for _, a := range r.duty.Agreements {
		if a.From.After(at) {
			continue
		}
		if (in(a.A, origin) && in(a.B, dest)) || (in(a.B, origin) && in(a.A, dest)) {
			return a.ID
		}
	}
	return ""
}

// sameSide reports whether shipFrom is a party of agreement id on the
// same side as origin (or origin itself).
func (r *rules) sameSide(id, origin, shipFrom string) bool {
	if shipFrom == "" || shipFrom == origin || (r.eu[origin] && r.eu[shipFrom]) {
		return true
	}
	in := func(list []string, c string) bool {
		return slices.Contains(list, c) || (slices.Contains(list, "EU") && r.eu[c])
	}
	for _, a := range r.duty.Agreements {
		if a.ID != id {
			continue
		}
		if (in(a.A, origin) && in(a.A, shipFrom)) || (in(a.B, origin) && in(a.B, shipFrom)) {
			return true
		}
	}
	return false
}
