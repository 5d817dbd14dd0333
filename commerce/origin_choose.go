package commerce

import (
	"fmt"
	"slices"
	"strings"
)

// The origin decision (docs/tools.md#origin-choice), pure: it ranks
// candidates already priced and names why each loser lost. The tool
// (origin.go) prices them; the audit ranks the recorded candidates again
// with the same functions (VerifyOriginPlan), so a plan whose choice does
// not follow from its own figures is found.

// betterOrigin reports whether a ranks before b: fewer parcels; meets the
// requested service; lower landed cost; earlier delivery (max, then min
// days); then the warehouse codes. Both must fill and be priced.
func betterOrigin(a, b OriginCandidate) bool {
	if len(a.Origins) != len(b.Origins) {
		return len(a.Origins) < len(b.Origins)
	}
	if a.MeetsService != b.MeetsService {
		return a.MeetsService
	}
	if a.Landed.Total.Amount != b.Landed.Total.Amount {
		return a.Landed.Total.Amount < b.Landed.Total.Amount
	}
	if a.MaxDays != b.MaxDays {
		return a.MaxDays < b.MaxDays
	}
	if a.MinDays != b.MinDays {
		return a.MinDays < b.MinDays
	}
	return candidateKey(a) < candidateKey(b)
}

// candidateKey orders candidates with equal figures: their origins and
// parcels, as text.
func candidateKey(c OriginCandidate) string {
	parts := make([]string, len(c.Origins))
	for i, o := range c.Origins {
		p := o
		if i < len(c.Parcels) {
			p += ":" + strings.Join(c.Parcels[i], ",")
		}
		parts[i] = p
	}
	return strings.Join(parts, "+")
}

// eligible is a candidate that can be chosen: it fills and was priced.
func eligible(c OriginCandidate) bool {
	return c.Fills && c.Landed != nil && c.Rejected != RejectCannotShip
}

// DecideOrigins marks the best eligible candidate chosen and every other
// one rejected with its reason; it returns the chosen index, -1 when none
// is eligible. Candidates already rejected (out of stock, cannot ship)
// keep their reason.
func DecideOrigins(cands []OriginCandidate) int {
	best := -1
	for i, c := range cands {
		if eligible(c) && (best < 0 || betterOrigin(c, cands[best])) {
			best = i
		}
	}
	for i := range cands {
		c := &cands[i]
		c.Chosen = i == best
		if c.Chosen {
			c.Rejected, c.Reason = "", ""
			continue
		}
		if !eligible(*c) {
			continue
		}
		c.Rejected, c.Reason = lostTo(*c, cands[best])
	}
	return best
}

// lostTo says why c lost to the winner w.
func lostTo(c, w OriginCandidate) (string, string) {
	name := strings.Join(c.Origins, "+")
	wname := strings.Join(w.Origins, "+")
	switch {
	case len(c.Origins) != len(w.Origins):
		return RejectFewerParcels, fmt.Sprintf("%s ships in %d parcels; %s in %d", name, len(c.Origins), wname, len(w.Origins))
	case c.MeetsService != w.MeetsService:
		return RejectServiceNotOffered, fmt.Sprintf("%s does not offer the requested service (it would ship %s); %s does", name, c.ServiceLevel, wname)
	case c.Landed.Total.Amount != w.Landed.Total.Amount:
		return RejectCostlier, fmt.Sprintf("landed cost %s from %s against %s from %s", c.Landed.Total.Display(), name, w.Landed.Total.Display(), wname)
	case c.MaxDays != w.MaxDays || c.MinDays != w.MinDays:
		return RejectLaterDelivery, fmt.Sprintf("same landed cost; %s delivers in %d-%d days, %s in %d-%d", name, c.MinDays, c.MaxDays, wname, w.MinDays, w.MaxDays)
	}
	return RejectTieBreak, fmt.Sprintf("same landed cost and delivery as %s; the warehouse code decides", wname)
}

// SplitAssignments lists the ways to ship items from warehouses when no
// single one can: each line goes whole to one warehouse that holds it
// (available[warehouse][sku]), warehouses in the order given. It returns
// nil and the lines no warehouse can fill when there is none; at most
// limit assignments are listed, those with the fewest warehouses first.
func SplitAssignments(items []LineItem, warehouses []string, available map[string]map[string]int, limit int) ([][]string, []string) {
	options := make([][]string, len(items))
	var unfillable []string
	for i, it := range items {
		for _, w := range warehouses {
			if available[w][it.SKU] >= it.Quantity {
				options[i] = append(options[i], w)
			}
		}
		if len(options[i]) == 0 {
			unfillable = append(unfillable, it.SKU)
		}
	}
	if len(unfillable) > 0 {
		return nil, unfillable
	}
	var all [][]string
	cur := make([]string, len(items))
	var walk func(i int)
	walk = func(i int) {
		if len(all) >= 4*limit {
			return
		}
		if i == len(items) {
			all = append(all, slices.Clone(cur))
			return
		}
		for _, w := range options[i] {
			cur[i] = w
			walk(i + 1)
		}
	}
	walk(0)
	count := func(a []string) int {
		seen := map[string]bool{}
		for _, w := range a {
			seen[w] = true
		}
		return len(seen)
	}
	slices.SortStableFunc(all, func(a, b []string) int { return count(a) - count(b) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// GroupParcels turns an assignment (one warehouse per item) into parcels
// in warehouse order, each with its items in basket order.
func GroupParcels(items []LineItem, assignment []string) (origins []string, parcels [][]LineItem) {
	for _, w := range assignment {
		if !slices.Contains(origins, w) {
			origins = append(origins, w)
		}
	}
	slices.Sort(origins)
	parcels = make([][]LineItem, len(origins))
	for i, it := range items {
		k := slices.Index(origins, assignment[i])
		parcels[k] = append(parcels[k], LineItem{SKU: it.SKU, Quantity: it.Quantity})
	}
	return origins, parcels
}

// SumLanded adds landed costs of one currency.
func SumLanded(currency string, ls ...LandedCost) LandedCost {
	out := LandedCost{Goods: Money{Currency: currency}, Shipping: Money{Currency: currency}, Duty: Money{Currency: currency},
		Tax: Money{Currency: currency}, Total: Money{Currency: currency}}
	for _, l := range ls {
		out.Goods.Amount += l.Goods.Amount
		out.Shipping.Amount += l.Shipping.Amount
		out.Duty.Amount += l.Duty.Amount
		out.Tax.Amount += l.Tax.Amount
		out.Total.Amount += l.Total.Amount
	}
	return out
}

// VerifyOriginPlan checks that a plan's choice follows from its own
// figures: every priced candidate's landed total is the sum of its parts,
// ranking the candidates again chooses the same one, each loser's reason
// is the one the ranking gives, and the parcels are the chosen
// candidate's. The audit runs it on every recorded plan
// (docs/audit.md#origin-choice).
func VerifyOriginPlan(p OriginPlan) error {
	for _, list := range [][]OriginCandidate{p.Candidates, p.Splits} {
		for _, c := range list {
			if l := c.Landed; l != nil && l.Goods.Amount+l.Shipping.Amount+l.Duty.Amount+l.Tax.Amount != l.Total.Amount {
				return fmt.Errorf("candidate %s: landed cost %d is not goods + shipping + duty + tax", strings.Join(c.Origins, "+"), l.Total.Amount)
			}
		}
	}
	pool := p.Candidates
	if p.Split {
		for _, c := range p.Candidates {
			if eligible(c) {
				return fmt.Errorf("the plan splits although %s alone fills the basket", strings.Join(c.Origins, "+"))
			}
		}
		pool = p.Splits
	}
	again := make([]OriginCandidate, len(pool))
	copy(again, pool)
	best := DecideOrigins(again)
	if best < 0 {
		return fmt.Errorf("no candidate of the plan can be chosen")
	}
	for i := range pool {
		if pool[i].Chosen != again[i].Chosen || pool[i].Rejected != again[i].Rejected {
			return fmt.Errorf("candidate %s: recorded chosen=%v rejected=%q, the rule gives chosen=%v rejected=%q",
				strings.Join(pool[i].Origins, "+"), pool[i].Chosen, pool[i].Rejected, again[i].Chosen, again[i].Rejected)
		}
	}
	w := again[best]
	if !slices.Equal(w.Origins, p.Origins()) {
		return fmt.Errorf("the parcels ship from %v; the chosen candidate from %v", p.Origins(), w.Origins)
	}
	parts := make([]LandedCost, len(p.Parcels))
	for i, pq := range p.Parcels {
		parts[i] = pq.Landed
	}
	if sum := SumLanded(p.Currency, parts...); sum != p.Landed || sum.Total != w.Landed.Total {
		return fmt.Errorf("the parcels' landed cost %d is not the plan's %d or the chosen candidate's %d", sum.Total.Amount, p.Landed.Total.Amount, w.Landed.Total.Amount)
	}
	return nil
}
