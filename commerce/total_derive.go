package commerce

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// totalSources are the snapshots a total is derived from, read for the
// workflow that asks (readSources): the origin choice, the pricing call,
// the compliance call and, when support staff cleared the basket, their
// approval. checkout.compute_total derives the total from them and the
// write derives it again the same way (docs/quote-seals.md#what-a-total-is-derived-from).
type totalSources struct {
	refs       EvidenceRefs
	origins    *snapshot
	pricing    *snapshot
	compliance *snapshot
	approval   *snapshot // nil: none named
}

// deriveTotal is the one derivation of a total: the content of every
// snapshot is checked against the others — the basket's SKUs and
// quantities, the destination, the warehouses, the transport mode, the
// currency and the time — and the total is added up from them alone.
// issued is when the total was (or is being) sealed, now the clock of the
// caller; a compliance verdict must hold at issued, the prices and the
// origin choice at now.
func deriveTotal(s totalSources, issued, now time.Time) (Total, error) {
	var plan OriginPlan
	var quote Quote
	if err := s.origins.decode(&plan); err != nil {
		return Total{}, err
	}
	if err := s.pricing.decode(&quote); err != nil {
		return Total{}, err
	}
	for _, sn := range []*snapshot{s.origins, s.pricing} {
		if !now.Before(sn.expires()) {
			return Total{}, sealRefusal("evidence_expired", "snapshot %s (%s) is past its TTL", sn.id, sn.tool)
		}
	}
	if len(plan.Parcels) == 0 || plan.Currency != quote.Currency {
		return Total{}, sealRefusal("origin_not_chosen", "origin choice %s does not plan this quote's currency or any parcel", s.origins.id)
	}
	if !samePlanItems(plan, quote) {
		return Total{}, sealRefusal("price_not_quoted", "pricing snapshot %s did not price the basket origin choice %s ships, where it ships from",
			s.pricing.id, s.origins.id)
	}
	if err := cleared(s, plan, issued); err != nil {
		return Total{}, err
	}
	parts, err := PartsOf(plan, quote)
	if err != nil {
		return Total{}, err
	}
	return ComputeTotal(parts)
}

// PartsOf are the parts of the total of quote shipped as plan: a split's
// parcels, or — one warehouse — its shipping option and duty estimate,
// so the total keeps the single-parcel shape (no parcels, ShipFrom) whose
// hash users confirmed before splits existed.
func PartsOf(plan OriginPlan, quote Quote) (TotalParts, error) {
	exp := plan.ExpiresAt
	parts := TotalParts{Quote: quote, ShippingExpiresAt: &exp, Parcels: plan.Parcels}
	if plan.Split || len(plan.Parcels) != 1 {
		return parts, nil
	}
	p := plan.Parcels[0]
	if p.Landed.Goods != quote.Subtotal {
		return TotalParts{}, toolkit.Errorf(toolkit.PriceChanged, "the quote prices the goods at %s, the origin choice at %s",
			quote.Subtotal.Display(), p.Landed.Goods.Display()).
			WithRecovery("choose the origins again and re-quote", ToolChooseOrigins, ToolGetQuote)
	}
	parts.Parcels, parts.Shipping, parts.Duties = nil, p.Shipping, p.Duties
	return parts, nil
}

// samePlanItems reports whether the quote priced exactly the plan's
// basket, each line where the plan ships it from.
func samePlanItems(plan OriginPlan, q Quote) bool {
	want := planItems(plan)
	if len(want) != len(q.Lines) {
		return false
	}
	for _, l := range q.Lines {
		from := l.ShipFrom
		if !plan.Split {
			from = q.ShipFrom
		}
		if want[l.SKU] != l.Quantity || norm(from) != norm(plan.ShipFromOf(l.SKU)) {
			return false
		}
	}
	return true
}

// planItems are the plan's SKUs and quantities over all parcels.
func planItems(plan OriginPlan) map[string]int {
	out := map[string]int{}
	for _, p := range plan.Parcels {
		for _, it := range p.Items {
			out[it.SKU] += it.Quantity
		}
	}
	return out
}

// StrictestMode is the transport mode compliance is checked for: a
// parcel by air makes the basket's mode air, else the first parcel's.
func StrictestMode(plan OriginPlan) string {
	if len(plan.Parcels) == 0 {
		return ""
	}
	mode := plan.Parcels[0].Shipping.TransportMode
	for _, p := range plan.Parcels {
		if p.Shipping.TransportMode == "air" {
			mode = "air"
		}
	}
	return mode
}

// cleared checks that compliance cleared exactly this basket to this
// destination by this mode, or that support staff of a role the verdict
// names cleared it after it was given. A block anywhere is
// COMPLIANCE_BLOCKED.
func cleared(s totalSources, plan OriginPlan, issued time.Time) error {
	c := s.compliance
	if c.status == string(toolkit.StatusError) {
		var e toolkit.Error
		if json.Unmarshal(c.output, &e) == nil && e.Code == toolkit.ComplianceBlocked {
			return toolkit.Errorf(toolkit.ComplianceBlocked, "compliance blocked this basket (snapshot %s)", c.id).
				WithDetail("reason", "compliance_blocked")
		}
		return sealRefusal("compliance_not_cleared", "compliance snapshot %s holds no verdict", c.id)
	}
	var v ComplianceVerdict
	if err := c.decode(&v); err != nil {
		return err
	}
	if v.Verdict == VerdictBlock {
		return toolkit.Errorf(toolkit.ComplianceBlocked, "compliance blocked this basket (snapshot %s)", c.id).
			WithDetail("reason", "compliance_blocked")
	}
	items := map[string]int{}
	for _, it := range v.Items {
		items[it.SKU] += it.Quantity
	}
	d := plan.Parcels[0].Duties
	if v.Destination == nil || v.Destination.Country != plan.Destination || v.Destination.Country != d.Country ||
		v.Destination.Region != d.Region || v.TransportMode != StrictestMode(plan) || !mapsEqual(items, planItems(plan)) {
		return sealRefusal("compliance_not_cleared", "compliance snapshot %s is not a verdict on this basket to %s by %s",
			c.id, plan.Destination, StrictestMode(plan))
	}
	if s.approval != nil {
		return approvedAfter(s.approval, c, v)
	}
	if v.Verdict != VerdictAllow {
		return sealRefusal("compliance_not_cleared", "compliance answered %s (snapshot %s) and no support-staff approval is named", v.Verdict, c.id)
	}
	if c.ttl > 0 && issued.After(c.expires()) {
		return sealRefusal("evidence_expired", "compliance snapshot %s was past its TTL when the total was sealed", c.id)
	}
	return nil
}

// approvedAfter requires an approve decision of a verified staff member
// whose role the verdict itself names, recorded after the verdict.
func approvedAfter(ap, comp *snapshot, v ComplianceVerdict) error {
	var rec support.ApprovalRecord
	if ap.decode(&rec) != nil || rec.Decision != support.DecisionApprove || !rec.StaffVerified {
		return sealRefusal("compliance_not_cleared", "approval snapshot %s is not an approval", ap.id)
	}
	if !slices.Contains(v.ReviewRoles, rec.ApproverRole) {
		return sealRefusal("compliance_not_cleared", "approval snapshot %s was decided by a %s, the verdict needs one of %v",
			ap.id, rec.ApproverRole, v.ReviewRoles)
	}
	if ap.createdAt.Before(comp.createdAt) {
		return sealRefusal("compliance_not_cleared", "approval snapshot %s predates the compliance answer %s", ap.id, comp.id)
	}
	return nil
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// norm is a warehouse code with "" as DefaultWarehouse.
func norm(w string) string {
	if w == "" {
		return DefaultWarehouse
	}
	return w
}
