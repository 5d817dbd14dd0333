package commerce

import (
	"slices"
	"testing"
)

// splitBasket is held by no warehouse alone: the jacket is in the US and
// GB, the coffee in DE and the US, the knife in DE and GB.
var splitBasket = []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}, {SKU: "COF-ETH-YIR-1KG", Quantity: 1}, {SKU: "KNF-SANTOKU-18", Quantity: 1}}

var newYork = Address{Country: "US", Region: "NY", PostalCode: "10001"}

// The down jacket is sold out in DE and held in the US (40) and GB (80):
// to New York it ships from the US, a domestic sale with no import duty.
func TestChooseOriginsDownJacketToNewYork(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	plan, _, err := memCall[OriginPlan](t, inv, ToolChooseOrigins, ChooseOriginsArgs{
		Items: []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}}, Destination: newYork, Currency: "USD",
		ShippingService: ServiceStandard, Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Split || len(plan.Parcels) != 1 || plan.Parcels[0].ShipFrom != "US" {
		t.Fatalf("parcels %+v, want one from US", plan.Origins())
	}
	p := plan.Parcels[0]
	if p.Duties.Duty.Amount != 0 || p.Duties.Regime != "domestic" {
		t.Fatalf("US→NY: duty %v regime %s, want no import duty", p.Duties.Duty, p.Duties.Regime)
	}
	byFrom := map[string]OriginCandidate{}
	for _, c := range plan.Candidates {
		byFrom[c.Origins[0]] = c
	}
	if c := byFrom["DE"]; c.Fills || c.Rejected != RejectOutOfStock {
		t.Fatalf("DE candidate %+v, want rejected out_of_stock", c)
	}
	if c := byFrom["GB"]; !c.Fills || c.Rejected != RejectCostlier || c.Landed == nil || c.Landed.Total.Amount <= plan.Landed.Total.Amount {
		t.Fatalf("GB candidate %+v, want a costlier landed cost than the US's %v", c, plan.Landed.Total)
	}
	if err := VerifyOriginPlan(plan); err != nil {
		t.Fatalf("the plan does not verify: %v", err)
	}
}

// A basket no warehouse holds alone (a down jacket DE has sold out, a
// coffee GB does not carry, a knife the US does not carry) splits into two parcels, each with its own shipping,
// duty and tax; the total adds them up.
func TestChooseOriginsSplit(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	items := splitBasket
	dest := Address{Country: "FR", PostalCode: "75001"}
	plan, _, err := memCall[OriginPlan](t, inv, ToolChooseOrigins, ChooseOriginsArgs{Items: items, Destination: dest,
		Currency: "EUR", ShippingService: ServiceStandard, Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Split || len(plan.Parcels) != 2 {
		t.Fatalf("plan %v split=%v, want two parcels", plan.Origins(), plan.Split)
	}
	if err := VerifyOriginPlan(plan); err != nil {
		t.Fatal(err)
	}
	v, _, err := memCall[ComplianceVerdict](t, inv, ToolCheckCompliance, CheckComplianceArgs{Items: items, Destination: dest, TransportMode: "ground"})
	t.Logf("plan %v landed %s; compliance %s %.2f %v", plan.Origins(), plan.Landed.Total.Display(), v.Verdict, v.Confidence, err)
	priced := make([]LineItem, len(items))
	for i, it := range items {
		priced[i] = LineItem{SKU: it.SKU, Quantity: it.Quantity, ShipFrom: plan.ShipFromOf(it.SKU)}
	}
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: priced, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	exp := plan.ExpiresAt
	total, _, err := computeParts(TotalParts{Quote: q, Parcels: plan.Parcels, ShippingExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if len(total.Parcels) != 2 {
		t.Fatalf("total parcels %d, want 2", len(total.Parcels))
	}
	var ship, duty, tax int64
	for i, p := range total.Parcels {
		if p.ShipFrom != plan.Parcels[i].ShipFrom || p.Shipping != plan.Parcels[i].Shipping.Cost {
			t.Fatalf("parcel %d: %+v, want the plan's %s", i, p, plan.Parcels[i].ShipFrom)
		}
		ship, duty, tax = ship+p.Shipping.Amount, duty+p.Duty.Amount, tax+p.Tax.Amount
	}
	if total.Shipping.Amount != ship || total.Duty.Amount != duty || total.Tax.Amount != tax {
		t.Fatalf("total shipping/duty/tax %v/%v/%v, want the parcels' sums %d/%d/%d", total.Shipping, total.Duty, total.Tax, ship, duty, tax)
	}
	if total.GrandTotal.Amount != plan.Landed.Total.Amount-total.DueOnDelivery.Amount {
		t.Fatalf("grand total %v + due %v, want the plan's landed cost %v", total.GrandTotal, total.DueOnDelivery, plan.Landed.Total)
	}
	// Moving a line to the other parcel is refused.
	bad := slices.Clone(plan.Parcels)
	bad[0].Items, bad[1].Items = bad[1].Items, bad[0].Items
	if _, _, err := computeParts(TotalParts{Quote: q, Parcels: bad}); err == nil {
		t.Fatal("a total with lines moved between parcels was computed")
	}
}

// The decision rule, alone: fewest parcels, the service, landed cost,
// delivery, then the code.
func TestDecideOriginsRule(t *testing.T) {
	l := func(n int64) *LandedCost { return &LandedCost{Total: Money{n, "EUR"}, Goods: Money{n, "EUR"}} }
	c := func(o string, meets bool, total int64, maxDays int) OriginCandidate {
		return OriginCandidate{Origins: []string{o}, Fills: true, MeetsService: meets, Landed: l(total), MinDays: 1, MaxDays: maxDays}
	}
	for _, tc := range []struct {
		name   string
		cands  []OriginCandidate
		want   string
		reason string
	}{
		{"cheapest wins", []OriginCandidate{c("DE", true, 200, 3), c("US", true, 100, 5)}, "US", RejectCostlier},
		{"service before price", []OriginCandidate{c("DE", true, 200, 3), c("US", false, 100, 5)}, "DE", RejectServiceNotOffered},
		{"same cost: earliest delivery", []OriginCandidate{c("DE", true, 100, 5), c("GB", true, 100, 3)}, "GB", RejectLaterDelivery},
		{"same cost and days: code", []OriginCandidate{c("GB", true, 100, 3), c("DE", true, 100, 3)}, "DE", RejectTieBreak},
	} {
		t.Run(tc.name, func(t *testing.T) {
			best := DecideOrigins(tc.cands)
			if got := tc.cands[best].Origins[0]; got != tc.want {
				t.Fatalf("chose %s, want %s", got, tc.want)
			}
			for i, c := range tc.cands {
				if i != best && c.Rejected != tc.reason {
					t.Fatalf("%s rejected %q, want %q", c.Origins[0], c.Rejected, tc.reason)
				}
			}
		})
	}
}
