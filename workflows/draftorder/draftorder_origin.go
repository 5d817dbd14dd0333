package draftorder

import (
	"fmt"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce"
)

// OriginsSummary is where a draft order ships from and why, as the status
// query, the result and the MCP answer show it: the chosen parcels and
// every candidate considered, with its landed cost and why it lost. No
// personal data: warehouses, SKUs and amounts.
type OriginsSummary struct {
	// Origins are the chosen warehouses, one per parcel.
	Origins []string `json:"origins"`
	Split   bool     `json:"split"`
	// Rule is the decision rule (commerce.OriginRule).
	Rule    string          `json:"rule"`
	Parcels []ParcelSummary `json:"parcels"`
	// Landed is what the customer pays in the end over all parcels.
	Landed     commerce.LandedCost        `json:"landed_cost"`
	Candidates []commerce.OriginCandidate `json:"candidates"`
	Splits     []commerce.OriginCandidate `json:"splits,omitempty"`
	// SnapshotID is the evidence of the choice (shipping.choose_origins).
	SnapshotID string `json:"snapshot_id"`
}

// ParcelSummary is one chosen parcel.
type ParcelSummary struct {
	ShipFrom      string              `json:"ship_from"`
	SKUs          []string            `json:"skus"`
	ServiceLevel  string              `json:"service_level"`
	Carrier       string              `json:"carrier"`
	TransportMode string              `json:"transport_mode"`
	MinDays       int                 `json:"min_days"`
	MaxDays       int                 `json:"max_days"`
	Landed        commerce.LandedCost `json:"landed_cost"`
}

// originsSummary is the status's view of the current plan.
func (d *draftOrder) originsSummary() *OriginsSummary {
	p := d.plan
	if p == nil {
		return nil
	}
	s := &OriginsSummary{Origins: p.Origins(), Split: p.Split, Rule: p.Rule, Landed: p.Landed,
		Candidates: p.Candidates, Splits: p.Splits, SnapshotID: d.refs.OriginsSnapshotID}
	for _, pq := range p.Parcels {
		ps := ParcelSummary{ShipFrom: pq.ShipFrom, ServiceLevel: pq.Shipping.ServiceLevel, Carrier: pq.Shipping.Carrier,
			TransportMode: pq.Shipping.TransportMode, MinDays: pq.Shipping.MinDays, MaxDays: pq.Shipping.MaxDays, Landed: pq.Landed}
		for _, it := range pq.Items {
			ps.SKUs = append(ps.SKUs, it.SKU)
		}
		s.Parcels = append(s.Parcels, ps)
	}
	return s
}

// originDetails is the Web UI's Current Details line on the origins.
func (d *draftOrder) originDetails() string {
	p := d.plan
	if p == nil {
		return ""
	}
	var b strings.Builder
	if p.Split {
		b.WriteString(fmt.Sprintf("\n\nShips in %d parcels (no warehouse holds the whole basket):", len(p.Parcels)))
	} else {
		b.WriteString(fmt.Sprintf("\n\nShips from %s:", p.Parcels[0].ShipFrom))
	}
	for _, pq := range p.Parcels {
		skus := make([]string, len(pq.Items))
		for i, it := range pq.Items {
			skus[i] = it.SKU
		}
		b.WriteString(fmt.Sprintf("\n- %s: %s, %s by %s, %d-%d days, landed %s", pq.ShipFrom, strings.Join(skus, ", "),
			pq.Shipping.ServiceLevel, pq.Shipping.Carrier, pq.Shipping.MinDays, pq.Shipping.MaxDays, pq.Landed.Total.Display()))
	}
	cands := p.Candidates
	if p.Split {
		cands = append(append([]commerce.OriginCandidate{}, cands...), p.Splits...)
	}
	for _, c := range cands {
		if c.Chosen {
			continue
		}
		b.WriteString(fmt.Sprintf("\n- not %s: %s (%s)", strings.Join(c.Origins, "+"), strings.ReplaceAll(c.Rejected, "_", " "), c.Reason))
	}
	return b.String()
}
