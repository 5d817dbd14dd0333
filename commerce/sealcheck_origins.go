package commerce

import "slices"

// ShipsAsPlanned reports whether total (priced by quote) ships as plan:
// what deriveTotal builds, and what the audit checks again
// (docs/audit.md#origin-choice).
func ShipsAsPlanned(plan OriginPlan, total Total, quote Quote) bool {
	if len(plan.Parcels) == 0 {
		return false
	}
	if !plan.Split {
		return len(plan.Parcels) == 1 && len(total.Parcels) == 0 && total.ShipFrom == plan.Parcels[0].ShipFrom &&
			(quote.ShipFrom == total.ShipFrom)
	}
	if len(total.Parcels) != len(plan.Parcels) {
		return false
	}
	for i, p := range plan.Parcels {
		tp := total.Parcels[i]
		if tp.ShipFrom != p.ShipFrom || tp.Shipping != p.Shipping.Cost || tp.Duty != p.Duties.Duty || tp.Tax != p.Duties.Tax ||
			!slices.Equal(tp.Items, p.Items) {
			return false
		}
	}
	for _, l := range quote.Lines {
		if l.ShipFrom == "" || l.ShipFrom != plan.ShipFromOf(l.SKU) {
			return false
		}
	}
	return true
}
