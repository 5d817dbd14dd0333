package audit_test

import (
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// A draft order that chose its origins and split its basket audits clean:
// its origin choice was ranked again by the rule and its total ships as
// the choice decided (docs/audit.md#origin-choice).
func TestSplitDraftOrderAuditsItsOriginChoice(t *testing.T) {
	s := newRealStack(t)
	paris := commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	basket := []commerce.LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}, {SKU: "COF-ETH-YIR-1KG", Quantity: 1}, {SKU: "KNF-SANTOKU-18", Quantity: 1}}
	in := orderInput(uniqueKey("audit-split"), basket, paris, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	if res.Origins == nil || !res.Origins.Split || len(res.Total.Parcels) != 2 {
		t.Fatalf("origins %+v, %d parcels", res.Origins, len(res.Total.Parcels))
	}
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if code := audit.ExitCode(rep, err); code != audit.ExitClean {
		t.Fatalf("split draft order: exit %d (%v), findings %v", code, err, rep.Findings)
	}
	checked := false
	for _, a := range rep.Activities {
		if a.Tool == commerce.ToolChooseOrigins && a.OK && a.SnapshotID == res.Origins.SnapshotID {
			checked = true
		}
	}
	if !checked {
		t.Fatalf("the audit checked no origin choice %s: %+v", res.Origins.SnapshotID, rep.Activities)
	}
}

// A split order confirmed after its quotes expired chooses its origins
// again in the re-quote (a quote step of its own),
// totals the parcels again, and still audits clean.
func TestSplitDraftOrderRequoted(t *testing.T) {
	s := newRealStack(t)
	requoteTQ := s.startWorker(t, shortQuotes(4*time.Second))
	paris := commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	basket := []commerce.LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}, {SKU: "COF-ETH-YIR-1KG", Quantity: 1}, {SKU: "KNF-SANTOKU-18", Quantity: 1}}
	in := orderInput(uniqueKey("audit-split-rq"), basket, paris, "EUR")
	_, res := s.runDraftOrder(t, requoteTQ, in, driver{confirmLate: true})
	requireState(t, res, draftorder.StateDraftCreated)
	if len(res.Total.Parcels) != 2 {
		t.Fatalf("%d parcels after the re-quote", len(res.Total.Parcels))
	}
	steps := map[string]bool{}
	for _, e := range res.Evidence {
		steps[e.Step] = true
	}
	if !steps["q1/origins"] || !steps["q2/origins"] || !steps["q2/total"] {
		t.Fatalf("evidence steps %v: want the origins chosen in both rounds", steps)
	}
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if code := audit.ExitCode(rep, err); code != audit.ExitClean {
		t.Fatalf("re-quoted split order: exit %d (%v), findings %v", code, err, rep.Findings)
	}
}
