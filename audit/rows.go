package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/commerce"
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
)

// laterDraftStatus: a draft created open may since have expired, been
// converted or cancelled; no other change is legitimate.
var laterDraftStatus = map[string]bool{"open": true, "expired": true, "converted": true, "cancelled": true}

// checkRows cross-checks the draft_orders rows the run's create calls wrote
// against the calls' envelopes (whose data the evidence checks tie to the
// snapshots) and the run's own result. The evidence chain cannot see a
// business row changed behind the application's back; this can.
func checkRows(ctx context.Context, d Deps, h *historypb.History, ev *events, rep *Report) error {
	seen := map[string]bool{}
	for _, a := range ev.Activities {
		if a.State != stateCompleted {
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
			if err := checkDraftRow(ctx, d, got, "the create call's evidence", f, rep); err != nil {
				return err
			}
			seen[got.DraftOrderID] = true
		}
	}
	// The run's result states the draft order too; a mismatch already
	// found against the create call's envelope is not repeated.
	if res := draftResult(d, h); res != nil && res.DraftOrderID != "" && !seen[res.DraftOrderID] {
		return checkDraftRow(ctx, d, *res, "the workflow's result", Finding{}, rep)
	}
	return nil
}

// checkDraftRow compares the draft_orders row of want.DraftOrderID with want.
func checkDraftRow(ctx context.Context, d Deps, want commerce.DraftOrder, source string, f Finding, rep *Report) error {
	var status, quoteHash, currency string
	var total int64
	err := d.Evidence.Pool().QueryRow(ctx, `SELECT status, quote_hash, currency, grand_total_minor FROM draft_orders
		WHERE draft_order_id = $1`, want.DraftOrderID).Scan(&status, &quoteHash, &currency, &total)
	if errors.Is(err, pgx.ErrNoRows) {
		f.Kind, f.Detail = KindRowMissing, fmt.Sprintf("draft order %s named by %s has no draft_orders row", want.DraftOrderID, source)
		rep.find(f)
		return nil
	}
	if err != nil {
		return errf("read draft order %s: %v", want.DraftOrderID, err)
	}
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
