package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Finding kinds of the business-row cross-check
// (docs/audit.md#business-rows).
const (
	// KindRowMismatch: a row the workflow wrote (a draft order) no longer
	// says what the create call's evidence and the history's result say:
	// total, quote hash, currency or status.
	KindRowMismatch = "row_mismatch"
	// KindRowMissing: the history says a row was written and it is gone.
	KindRowMissing = "row_missing"
	// KindRowForeign: a draft_orders row names the audited workflow, but
	// none of its create calls wrote it (docs/quote-seals.md#audit-and-reconcile).
	KindRowForeign = "row_foreign"
	// KindRowUnbacked: a draft_orders row of the audited workflow whose
	// total or compliance the workflow's own evidence does not back.
	KindRowUnbacked = "row_unbacked"
	// KindRowForged: a draft_orders row of the audited workflow no worker's
	// key vouches for (docs/evidence.md#draft-row-signatures): written or
	// changed by hand.
	KindRowForged = "row_forged"
	// KindRowForeignRun: a draft_orders row written for a run that is not
	// a DraftOrder, as the worker's signature on it, or the audited
	// history's type, says.
	KindRowForeignRun = "row_foreign_run"
)

// laterDraftStatus: a draft created open may since have expired, been
// converted or cancelled; no other change is legitimate.
var laterDraftStatus = map[string]bool{"open": true, "expired": true, "converted": true, "cancelled": true}

// checkRows cross-checks the draft_orders rows the run's create calls wrote
// against the calls' envelopes (whose data the evidence checks tie to the
// snapshots) and the run's own result. The evidence chain cannot see a
// business row changed behind the application's back; this can.
func checkRows(ctx context.Context, d Deps, r reads, h *historypb.History, ev *events, rep *Report) error {
	seen := map[string]bool{}
	for _, a := range ev.Activities {
		if !a.answered() {
			continue
		}
		envs, _ := a.envelopes(d.DataConverter) // undecodable results are findings of checkActivities already
		for _, e := range envs {
			env := e.env
			if env.Tool != commerce.ToolCreateDraftOrder || !env.OK {
				continue
			}
			var got commerce.DraftOrder
			if json.Unmarshal(env.Data, &got) != nil || got.DraftOrderID == "" {
				continue // a dry run writes no row
			}
			f := Finding{ActivityID: a.ID, ActivityType: a.Type, EventID: a.EventID, Tool: env.Tool, SnapshotID: env.SnapshotID()}
			if err := checkDraftRow(ctx, r, got, "the create call's evidence", f, rep); err != nil {
				return err
			}
			seen[got.DraftOrderID] = true
		}
	}
	// The run's result states the draft order too; a mismatch already
	// found against the create call's envelope is not repeated.
	if res := draftResult(d, h); res != nil && res.DraftOrderID != "" && !seen[res.DraftOrderID] {
		if err := checkDraftRow(ctx, r, *res, "the workflow's result", Finding{}, rep); err != nil {
			return err
		}
		seen[res.DraftOrderID] = true
	}
	return checkWorkflowRows(ctx, r, seen, rep)
}

// checkWorkflowRows reads every draft row that names the audited workflow:
// one none of its create calls wrote is row_foreign, one whose total or
// compliance the workflow's own evidence does not back is row_unbacked. A
// row inserted by hand is one or both.
func checkWorkflowRows(ctx context.Context, r reads, written map[string]bool, rep *Report) error {
	rows, err := r.workflowRows(ctx, rep.WorkflowID)
	if err != nil {
		return errf("read the draft rows of %s: %v", rep.WorkflowID, err)
	}
	for _, row := range rows {
		f := Finding{Tool: commerce.ToolCreateDraftOrder}
		if row.Forged != "" {
			f.Kind, f.Detail = KindRowForged, fmt.Sprintf("draft_orders row %s: %s", row.DraftOrderID, row.Forged)
			rep.find(f)
		}
		if t := row.WorkflowType; (t != "" && t != draftorder.WorkflowName) || rep.WorkflowType != draftorder.WorkflowName {
			f.Kind, f.Detail = KindRowForeignRun, fmt.Sprintf("draft_orders row %s was written for a run of type %q (signed %q), not %s",
				row.DraftOrderID, rep.WorkflowType, row.WorkflowType, draftorder.WorkflowName)
			rep.find(f)
		}
		if !written[row.DraftOrderID] {
			f.Kind, f.Detail = KindRowForeign, fmt.Sprintf("draft_orders row %s names this workflow, but none of its create calls wrote it", row.DraftOrderID)
			rep.find(f)
		}
		var why []string
		if !row.TotalBacked {
			why = append(why, "no compute_total of this workflow with its quote hash and grand total, on this workflow's pricing")
		}
		if !row.ComplianceBacked {
			why = append(why, "no compliance allow or support-staff approval in this workflow")
		}
		if len(why) > 0 {
			f.Kind, f.Detail = KindRowUnbacked, fmt.Sprintf("draft_orders row %s: %s", row.DraftOrderID, strings.Join(why, "; "))
			rep.find(f)
		}
	}
	return nil
}

// checkDraftRow compares the draft_orders row of want.DraftOrderID with want.
func checkDraftRow(ctx context.Context, r reads, want commerce.DraftOrder, source string, f Finding, rep *Report) error {
	row, err := r.draftRow(ctx, want.DraftOrderID)
	if err != nil {
		return errf("read draft order %s: %v", want.DraftOrderID, err)
	}
	if row == nil {
		f.Kind, f.Detail = KindRowMissing, fmt.Sprintf("draft order %s named by %s has no draft_orders row", want.DraftOrderID, source)
		rep.find(f)
		return nil
	}
	status, quoteHash, currency, total := row.status, row.quoteHash, row.currency, row.total
	var diffs []string
	if total != want.GrandTotal.Amount || currency != want.GrandTotal.Currency {
		diffs = append(diffs, fmt.Sprintf("grand total %d %s, %s says %d %s", total, currency, source, want.GrandTotal.Amount, want.GrandTotal.Currency))
	}
	if quoteHash != want.QuoteHash {
		diffs = append(diffs, fmt.Sprintf("quote hash %s, %s says %s", quoteHash, source, want.QuoteHash))
	}
	if status != want.Status && !(want.Status == "open" && laterDraftStatus[status]) {
		diffs = append(diffs, fmt.Sprintf("status %q, %s says %q", status, source, want.Status))
	}
	for _, diff := range diffs {
		g := f
		g.Kind, g.Detail = KindRowMismatch, fmt.Sprintf("draft_orders row %s: %s", want.DraftOrderID, diff)
		rep.find(g)
	}
	return nil
}

// draftResult is the draft order of the run's completed result, if any.
func draftResult(d Deps, h *historypb.History) *commerce.DraftOrder {
	for _, e := range h.GetEvents() {
		if e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
			continue
		}
		p := e.GetWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
		if len(p) == 0 {
			return nil
		}
		var res struct {
			DraftOrder *commerce.DraftOrder `json:"draft_order"`
		}
		if d.DataConverter.FromPayload(p[0], &res) != nil {
			return nil
		}
		return res.DraftOrder
	}
	return nil
}
