package commerce

import (
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// CheckOrderFacts refuses what the draft-order tools would refuse from
// their built-in rule data alone, so a starter can refuse it before a
// workflow exists: a currency the built-in exchange table cannot quote in
// (pricing would say INVALID_ARGUMENT) and a destination country no tax
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
	fx, err := BuiltinFX()
	if err != nil {
		return toolkit.Errorf(toolkit.UpstreamError, "exchange table: %v", err)
	}
	if cs := fx.Currencies(); !slices.Contains(cs, currency) {
		return toolkit.Errorf(toolkit.InvalidArgument, "currency %q cannot be quoted, one of %s", currency, strings.Join(cs, ", ")).
			WithDetail("fields", []string{"currency"}).WithDetail("supported", cs).
			WithRecovery("fix the named fields and call again")
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
