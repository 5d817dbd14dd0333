package audit

import (
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// plan chose the US for a jacket to New York: cheaper than GB, DE out of
// stock.
func usPlan() commerce.OriginPlan {
	usd := func(n int64) commerce.Money { return commerce.Money{Amount: n, Currency: "USD"} }
	landed := func(goods, ship, tax int64) *commerce.LandedCost {
		return &commerce.LandedCost{Goods: usd(goods), Shipping: usd(ship), Duty: usd(0), Tax: usd(tax), Total: usd(goods + ship + tax)}
	}
	us, gb := landed(18900, 900, 800), landed(18900, 2900, 1500)
	p := commerce.OriginPlan{Currency: "USD", Rule: commerce.OriginRule,
		Candidates: []commerce.OriginCandidate{
			{Origins: []string{"DE"}, Rejected: commerce.RejectOutOfStock},
			{Origins: []string{"GB"}, Fills: true, MeetsService: true, Landed: gb, MinDays: 3, MaxDays: 6},
			{Origins: []string{"US"}, Fills: true, MeetsService: true, Landed: us, MinDays: 2, MaxDays: 4},
		},
		Parcels: []commerce.ParcelQuote{{ShipFrom: "US", Items: []commerce.LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}}, Landed: *us}},
		Landed:  *us,
	}
	commerce.DecideOrigins(p.Candidates)
	return p
}

func auditPlan(t *testing.T, p commerce.OriginPlan) []Finding {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var o originChecks
	rep := &Report{}
	o.see(&toolkit.Response{OK: true, Tool: commerce.ToolChooseOrigins, Data: data}, Finding{ActivityID: "1"}, rep)
	o.finish(rep)
	return rep.Findings
}

// The audit ranks a recorded origin choice again: a choice that follows
// from its figures passes; one that chose the costlier warehouse, or
// whose landed cost does not add up, is a finding.
func TestAuditReplaysTheOriginChoice(t *testing.T) {
	if f := auditPlan(t, usPlan()); len(f) != 0 {
		t.Fatalf("a sound choice: findings %v", f)
	}
	forged := usPlan()
	forged.Candidates[1].Chosen, forged.Candidates[1].Rejected = true, ""
	forged.Candidates[2].Chosen, forged.Candidates[2].Rejected = false, commerce.RejectCostlier
	forged.Parcels[0].ShipFrom = "GB"
	if f := auditPlan(t, forged); len(f) != 1 || f[0].Kind != KindOriginUnjustified {
		t.Fatalf("GB chosen although costlier: findings %v", f)
	}
	cheap := usPlan()
	cheap.Candidates[1].Landed.Total.Amount = 100 // GB "cheaper" without cheaper parts
	if f := auditPlan(t, cheap); len(f) != 1 || f[0].Kind != KindOriginUnjustified {
		t.Fatalf("a landed cost that does not add up: findings %v", f)
	}
}
