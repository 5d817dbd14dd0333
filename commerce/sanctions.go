package commerce

import (
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// refuseSanctioned answers COMPLIANCE_BLOCKED when the destination-level
// compliance rules (embargoes, sanctions, occupied regions) block the
// destination. Shipping, duties and compliance call it before they check
// the address: IR, CU, RU or Crimea without a postal code is a sanctioned
// destination, not a malformed address, and the
// draft order, which runs shipping and compliance in parallel and ranks
// ADDRESS_INVALID first, must see the same refusal from every tool. It
// uses the built-in rules whatever ComplianceChecker is configured:
// sanctions are not a provider's option. A country that is not ISO
// alpha-2 is left to the address check, which names the field.
func refuseSanctioned(field string, a Address) error {
	if strings.TrimSpace(a.Country) == "" {
		return nil
	}
	res, err := compliance.CheckDestination(compliance.Destination{Country: a.Country, Region: a.Region, City: a.City, PostalCode: a.PostalCode})
	if err != nil || res.Verdict != compliance.Block {
		return nil
	}
	country := strings.ToUpper(strings.TrimSpace(a.Country))
	return toolkit.Errorf(toolkit.ComplianceBlocked, "%s: the destination is under sanctions or embargo; nothing can ship there", country).
		WithDetail("fields", []string{field}).
		WithDetail("verdict", verdictFrom(res)).
		WithRecovery("tell the user that orders cannot be shipped to this destination; do not retry")
}
