package draftorder

import (
	"fmt"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce"
)

// maxFactLines bounds the basket lines listed in an approval's facts, so
// the Web UI's Current Details stay readable for a large basket.
const maxFactLines = 10

// approvalFacts are what a compliance reviewer decides on
// (docs/approvals.md#what-staff-see): each line of the basket with its
// product name and units, the basket's value, the shipping service and its
// transport mode, and the rules that fired with their sources. No personal
// data: the destination is a country, products are SKUs and catalog names.
func (d *draftOrder) approvalFacts() []string {
	facts := []string{"destination country: " + d.in.ShipTo.Country}
	if q := d.priced; q != nil {
		units := 0
		for i, l := range q.Lines {
			units += l.Quantity
			if i < maxFactLines {
				facts = append(facts, fmt.Sprintf("%d × %s %q at %s (HS %s, made in %s)",
					l.Quantity, l.SKU, l.Title, l.UnitPrice.Display(), l.HSCode, l.Origin))
			}
		}
		if n := len(q.Lines) - maxFactLines; n > 0 {
			facts = append(facts, fmt.Sprintf("… and %d more line(s), in the status query's total", n))
		}
		facts = append(facts, fmt.Sprintf("basket: %d unit(s) in %d line(s), goods value %s (before shipping, duty and tax)",
			units, len(q.Lines), q.Subtotal.Display()))
	}
	if o := d.option(); o != nil {
		s := fmt.Sprintf("shipping: %s service by %s, transport mode %s, %s", o.ServiceLevel, o.Carrier, o.TransportMode, o.Cost.Display())
		if o.ServiceLevel != d.in.ShippingService {
			s += fmt.Sprintf(" (%s is not offered to %s)", d.in.ShippingService, d.in.ShipTo.Country)
		}
		facts = append(facts, s)
	}
	if p := d.plan; p != nil {
		// Where it ships from decides duty and the transport mode
		// (docs/tools.md#origin-choice).
		facts = append(facts, fmt.Sprintf("ships from %s (landed cost %s; the cheapest warehouse that holds the basket)",
			strings.Join(p.Origins(), " + "), p.Landed.Total.Display()))
	}
	c := d.compliance
	facts = append(facts, fmt.Sprintf("compliance verdict: %s, confidence %.2f (approval needed below %.2f), ruleset %s",
		c.Verdict, c.Confidence, d.in.ApprovalConfidence, c.Ruleset))
	for _, r := range c.Reasons {
		facts = append(facts, "rule "+r)
	}
	return facts
}

// reasonLine renders a compliance reason without personal data: the rule's
// code, verdict and SKU, its message and the public source it rests on.
func reasonLine(r commerce.ComplianceReason) string {
	s := r.Code + " (" + r.Verdict
	if r.SKU != "" {
		s += ", " + r.SKU
	}
	s += "): " + strings.TrimSpace(r.Message)
	if r.Source != "" {
		s += " Source: " + r.Source
	}
	return s
}
