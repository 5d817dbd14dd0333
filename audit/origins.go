package audit

import (
	"encoding/json"
	"fmt"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// KindOriginUnjustified: a recorded origin choice (shipping.choose_origins)
// whose choice does not follow from its own candidates and figures, or a
// sealed total that does not ship as the choice it names decided
// (docs/audit.md#origin-choice).
const KindOriginUnjustified = "origin_unjustified"

// originChecks replays every origin choice of the audited run: each plan
// is ranked again by the documented rule (commerce.VerifyOriginPlan), and
// each sealed total that names a plan must ship as it decided.
type originChecks struct {
	plans  map[string]commerce.OriginPlan
	quotes map[string]commerce.Quote
	totals []originTotal
}

type originTotal struct {
	total commerce.Total
	f     Finding
}

// see takes one checked envelope.
func (o *originChecks) see(env *toolkit.Response, f Finding, rep *Report) {
	if !env.OK {
		return
	}
	if o.plans == nil {
		o.plans, o.quotes = map[string]commerce.OriginPlan{}, map[string]commerce.Quote{}
	}
	find := func(format string, args ...any) {
		g := f
		g.Kind, g.Detail = KindOriginUnjustified, fmt.Sprintf(format, args...)
		rep.find(g)
	}
	switch env.Tool {
	case commerce.ToolChooseOrigins:
		var p commerce.OriginPlan
		if err := json.Unmarshal(env.Data, &p); err != nil {
			find("the origin choice does not decode: %v", err)
			return
		}
		if err := commerce.VerifyOriginPlan(p); err != nil {
			find("the origin choice does not follow from its figures: %v", err)
			return
		}
		o.plans[env.SnapshotID()] = p
	case commerce.ToolGetQuote:
		var q commerce.Quote
		if json.Unmarshal(env.Data, &q) == nil {
			o.quotes[env.SnapshotID()] = q
		}
	case commerce.ToolComputeTotal:
		var t commerce.Total
		if json.Unmarshal(env.Data, &t) == nil && t.Evidence != nil && t.Evidence.OriginsSnapshotID != "" {
			o.totals = append(o.totals, originTotal{t, f})
		}
	}
}

// finish checks the totals against the plans they name.
func (o *originChecks) finish(rep *Report) {
	for _, t := range o.totals {
		e := t.total.Evidence
		g := t.f
		g.Kind = KindOriginUnjustified
		plan, ok := o.plans[e.OriginsSnapshotID]
		if !ok {
			g.Detail = fmt.Sprintf("the total names origin choice %s, which is not a choice of this run", e.OriginsSnapshotID)
			rep.find(g)
			continue
		}
		if q, ok := o.quotes[e.PricingSnapshotID]; !ok || !commerce.ShipsAsPlanned(plan, t.total, q) {
			g.Detail = fmt.Sprintf("the total does not ship as origin choice %s decided (%v)", e.OriginsSnapshotID, plan.Origins())
			rep.find(g)
		}
	}
}
