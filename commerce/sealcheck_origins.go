package commerce

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// checkOrigins verifies a total against the origin choice its seal names
// (docs/quote-seals.md#what-the-write-checks): the snapshot is this
// workflow's shipping.choose_origins answer, within its TTL, and the
// total ships exactly as it chose: from its one warehouse, or as its
// parcels (warehouse, lines, shipping, duty and tax each), with every
// quoted line stock-checked where its parcel ships from.
func (r *sealedReads) checkOrigins(ctx context.Context, id, wf string, total Total, quote Quote, now time.Time) error {
	snap, err := r.snapshot(ctx, id, ToolChooseOrigins, wf)
	if err != nil {
		return err
	}
	if !now.Before(snap.CreatedAt.Add(time.Duration(snap.TTLSeconds) * time.Second)) {
		return sealRefusal("evidence_expired", "the origin choice %s is past its TTL", snap.SnapshotID)
	}
	var plan OriginPlan
	if err := json.Unmarshal(snap.Output, &plan); err != nil || !ShipsAsPlanned(plan, total, quote) {
		return sealRefusal("origin_not_chosen", "the total does not ship as origin choice %s decided", snap.SnapshotID)
	}
	return nil
}

// ShipsAsPlanned reports whether total (priced by quote) ships as plan:
// what the write requires, and what the audit checks again
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
