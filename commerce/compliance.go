package commerce

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func complianceSpec() toolkit.Spec {
	return lookupSpec(ToolCheckCompliance, time.Hour, "compliance-rules",
		"Check a basket of catalog SKUs against the destination's embargoes and sanctions and the restricted "+
			"or prohibited categories per destination and transport mode (lithium batteries, aerosols, perfume, blades, "+
			"alcohol, tobacco and vapes, drones, ...). Use it before a draft order, in parallel with pricing; the mode "+
			"defaults to air, the strictest. Success: verdict allow (with any requirements such as age verification) "+
			"or uncertain with confidence and reasons: uncertain, or confidence below 0.80, must go to support staff "+
			"before the order proceeds. Common failures: COMPLIANCE_BLOCKED (details.verdict names the rules that "+
			"blocked; do not retry, tell the user), ADDRESS_INVALID, NOT_FOUND (unknown SKU).")
}

func (t *tools) checkCompliance(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in CheckComplianceArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	dest, products, warnings, err := t.basket(ctx, in.Destination, in.Items)
	if err != nil {
		return nil, err
	}
	q := compliance.Input{
		Destination: compliance.Destination{Country: dest.Country, Region: dest.Region, City: dest.City, PostalCode: dest.PostalCode},
		Mode:        compliance.Mode(in.TransportMode),
	}
	for _, it := range in.Items {
		q.Items = append(q.Items, complianceItem(products[it.SKU]))
	}
	// The verdict model (allow/uncertain/block, the approval threshold,
	// sanctions first) is the product's own: commerce/rules/compliance,
	// no provider interface.
	res, err := compliance.Check(q)
	if err != nil {
		if errors.Is(err, compliance.ErrInvalidInput) {
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
		}
		return nil, err
	}
	v := verdictFrom(res)
	v.Destination = &VerdictDestination{Country: dest.Country, Region: dest.Region}
	v.Items = stripOrigins(in.Items)
	// A compliance review is compliance's call (or an admin's): the
	// approval's roles come from here, never from its caller.
	v.ReviewRoles = []string{support.RoleCompliance, support.RoleAdmin}
	if res.Verdict == compliance.Block {
		return nil, toolkit.Errorf(toolkit.ComplianceBlocked, "the order cannot ship to %s by %s", dest.Country, res.Mode).
			WithDetail("verdict", v).
			WithRecovery("tell the user which items cannot ship there and offer to remove them")
	}
	return &toolkit.Output{Data: v, RulesetVersion: v.RulesetVersion, Warnings: warnings}, nil
}

// complianceItem translates the catalog's facts into the rules' input.
// The catalog's merchandising category is not passed: the rules have their
// own taxonomy and classify by HS code and UN number. Lithium batteries
// are declared as such (standalone or contained, with watt-hours rounded
// up, so a limit like 100 Wh is never passed by rounding), which lets the
// HS code still name the device (a drone is a drone with a battery).
func complianceItem(p Product) compliance.Item {
	it := compliance.Item{SKU: p.SKU, Title: p.Title, HSCode: p.HSCode, OriginCountry: p.Origin}
	switch p.UNNumber {
	case "UN3480", "UN3090":
		it.Battery = compliance.BatteryStandalone
	case "UN3481", "UN3091":
		it.Battery = compliance.BatteryContained
	case "":
		it.Battery = compliance.BatteryNone
	default:
		it.UNNumber = p.UNNumber
	}
	// A Li-metal battery's limits are grams of lithium, not Wh: its Wh
	// must not qualify it for the Li-ion exceptions (ADR SP188's 100 Wh).
	if p.BatteryWh > 0 && p.UNNumber != "UN3090" {
		it.BatteryWh = int64(math.Ceil(p.BatteryWh))
	}
	return it
}

func verdictFrom(r compliance.Result) ComplianceVerdict {
	v := ComplianceVerdict{Verdict: string(r.Verdict), Confidence: r.Confidence, Requirements: r.Requirements,
		TransportMode: string(r.Mode), RulesetVersion: r.RulesetVersion, Reasons: []ComplianceReason{}}
	if v.Requirements == nil {
		v.Requirements = []string{}
	}
	for _, x := range r.Reasons {
		v.Reasons = append(v.Reasons, ComplianceReason{Code: x.Code, SKU: x.SKU, Verdict: string(x.Verdict), Message: x.Message, Source: x.Source})
	}
	return v
}
