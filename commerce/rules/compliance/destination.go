package compliance

import (
	"fmt"
	"sort"
	"strings"
)

// CheckDestination applies the destination-level rules alone (embargoes,
// sanctions, occupied regions), without items or a transport mode. Tools
// call it before they look at the rest of an address: a sanctioned
// destination is refused as such, whether or not its postal code is
// well-formed. The result's Verdict is Allow with
// no reasons when no destination rule fires.
func CheckDestination(d Destination) (Result, error) {
	rs, err := ruleset()
	if err != nil {
		return Result{}, err
	}
	country := strings.ToUpper(strings.TrimSpace(d.Country))
	if !countryRE.MatchString(country) {
		return Result{}, fmt.Errorf("%w: destination country %q", ErrInvalidInput, d.Country)
	}
	d.Country = country
	res := Result{RulesetVersion: rs.version, Reasons: rs.destinationReasons(d)}
	res.Verdict, res.Confidence = aggregate(res.Reasons)
	return res, nil
}

// SanctionedDestinations lists a Destination for every destination-level
// rule of the data: each country rule (Country only) and each region rule
// (Country and the region's first code), countries sorted, regions in data
// order. Tests derive their sanctioned cases from it.
func SanctionedDestinations() []Destination {
	rs, err := ruleset()
	if err != nil {
		return nil
	}
	var out []Destination
	for cc := range rs.destinations {
		out = append(out, Destination{Country: cc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Country < out[j].Country })
	for _, rr := range rs.regions {
		d := Destination{Country: rr.Country}
		if len(rr.Codes) > 0 {
			d.Region = rr.Codes[0]
		} else if len(rr.Names) > 0 {
			d.Region = rr.Names[0]
		}
		out = append(out, d)
	}
	return out
}
