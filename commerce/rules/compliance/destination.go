package compliance

import (
	"fmt"
	"strings"
)

// CheckDestination applies the destination-level rules alone (embargoes,
// sanctions, occupied regions), without items or a transport mode. Tools
// call it before they look at the rest of an address: a sanctioned
// destination is refused as such, whether or not its postal code is
// well-formed (issue 10, finding 8). The result's Verdict is Allow with
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
