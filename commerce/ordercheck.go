package commerce

import (
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// CheckOrderFacts refuses what the draft-order tools would refuse from
// their built-in rule data alone, so a starter can refuse it before a
// workflow exists: a currency no exchange table can price (unknown to ISO
// 4217 rounding, or withdrawn such as BGN) and a destination country no tax
// rules model (the duties tool would say INVALID_ARGUMENT, after pricing,
// shipping and compliance already ran). It needs no database and no
// clock, so a workflow can run it too.
//
// A sanctioned or embargoed destination (a country, or a region of one
// such as Crimea, known by its region, city or postcode) passes: the compliance tool
// refuses it as COMPLIANCE_BLOCKED, with evidence, which is the answer an
// auditor must find. Catalog facts (unknown or discontinued SKUs, stock)
// live in PostgreSQL and are the pricing tool's to answer.
func CheckOrderFacts(currency string, to Address) error {
	// The currency is checked against what no exchange table can price
	// (not an ISO 4217 currency cartwright rounds, or one withdrawn), never
	// against the shipped table's list: the rates in use are the feed's,
	// and whether they price it is the pricing tool's answer, naming the
	// feed's currencies (docs/tools.md#exchange-rates).
	if !money.Known(currency) {
		return toolkit.Errorf(toolkit.InvalidArgument, "currency %q is not an ISO 4217 currency cartwright can price in", currency).
			WithDetail("fields", []string{"currency"}).
			WithRecovery("fix the named fields and call again: a three-letter ISO 4217 code such as EUR or USD")
	}
	if since, gone := money.Withdrawn(currency); gone {
		return toolkit.Errorf(toolkit.InvalidArgument, "currency %q was withdrawn on %s and can no longer be priced", currency, since).
			WithDetail("fields", []string{"currency"}).WithDetail("withdrawn", since).
			WithRecovery("fix the named fields and call again: the currency that replaced it (EUR for BGN)")
	}
	country := strings.ToUpper(strings.TrimSpace(to.Country))
	dest := compliance.Destination{Country: country, Region: to.Region, City: to.City, PostalCode: to.PostalCode}
	if res, err := compliance.CheckDestination(dest); err == nil && res.Verdict != compliance.Allow {
		return nil
	}
	if ds := tax.SupportedDestinations(); !slices.Contains(ds, country) {
		return toolkit.Errorf(toolkit.InvalidArgument, "destination country %q is not supported, one of %s", country, strings.Join(ds, ", ")).
			WithDetail("fields", []string{"ship_to.country"}).WithDetail("supported", ds).
			WithRecovery("fix the named fields and call again")
	}
	return nil
}
