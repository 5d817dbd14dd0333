package draftordertest

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	cwclient "github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// refundClient is a cartwright client whose refunds need staff above
// threshold and restock as restock says.
func (r *settleRig) refundClient(ctx context.Context, threshold int64, restock string) *cwclient.Client {
	r.t.Helper()
	so := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	codec.Apply(&so, codectest.Codec())
	c, err := cwclient.New(ctx, cwclient.Options{Temporal: so, TaskQueue: r.queue,
		Defaults: cwclient.Defaults{RefundApprovalAbove: threshold, ApprovalWindow: time.Hour, RefundRestock: restock, ReturnWindow: time.Hour}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(c.Close)
	return c
}

// code is the closed-set code of err ("" for none).
func code(err error) toolkit.Code {
	var te *toolkit.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// runStatus is how the last run of id closed (or RUNNING).
func (r *settleRig) runStatus(ctx context.Context, id string) enumspb.WorkflowExecutionStatus {
	r.t.Helper()
	d, err := r.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		r.t.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus()
}

var refundUser = toolkit.Request{UserID: "u_e2e", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_e2e"}}

// A refund is an update on the order (docs/payments.md#refunds): one line
// below the threshold answers REFUNDED at once; lines the order does not
// have, or more units than are left unrefunded, are refused through the
// update with INVALID_ARGUMENT, the run ends canceled (nothing failed) and
// the key is free for the corrected refund; the same key with other lines
// is CONFLICT; the rest, above the threshold, answers AWAITING_APPROVAL
// with what staff see, and is refunded after a sealed decision of staff
// with role refunds (a support member is refused); a refund of a fully
// refunded order is refused; the same key again is the same refund.
func TestRefunds(t *testing.T) {
	testenv.Integration(t)
	// The worker's own threshold: one unit is below it, the rest above,
	// so the rest reaches Stripe only with the staff approval.
	r := newSettleRig(t, time.Hour, func(c *config.Config) { c.RefundApprovalAbove = 3000 })
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 3}
	draftID, draft := r.paid(ctx, "refund", item)
	// One unit of three is below the threshold, the rest (two units,
	// shipping, duty and tax) above it.
	threshold := draft.GrandTotal.Amount / 2
	c := r.refundClient(ctx, threshold, draftorder.RestockNever)

	one := commerce.LineItem{SKU: item.SKU, Quantity: 1}
	oneKey := uniqueKey("rf-one")
	st, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: oneKey, Lines: []commerce.LineItem{one}, Request: refundUser})
	if err != nil || st.State != draftorder.StateRefunded || st.Result == nil || st.Result.Refund == nil ||
		st.Result.Refund.RefundID == "" || st.Result.Approval != nil {
		t.Fatalf("one line: %+v, %v", st, err)
	}
	unit := st.Result.Refund.Amount.Amount
	if unit <= 0 || unit > threshold {
		t.Fatalf("one line refunded %d (want its unit price, below the threshold)", unit)
	}
	// The same key with other lines: CONFLICT, whether the run is open or
	// closed (never restocks: it closed once refunded).
	if _, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: oneKey, Lines: []commerce.LineItem{{SKU: item.SKU, Quantity: 2}},
		Request: refundUser}); code(err) != toolkit.Conflict {
		t.Fatalf("the same key with other lines: %v", err)
	}

	// Refused by the first step: the update answers the code, the run is
	// canceled, not failed, and the key is free again.
	for _, bad := range [][]commerce.LineItem{
		{{SKU: "TEE-ORG-M-WHT", Quantity: 1}},
		{{SKU: item.SKU, Quantity: 9}},
		// Three units: the order has three, one is refunded already.
		{{SKU: item.SKU, Quantity: 3}},
	} {
		key := uniqueKey("rf-bad")
		_, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: key, Lines: bad, Request: refundUser})
		if code(err) != toolkit.InvalidArgument {
			t.Fatalf("refund of %v: %v", bad, err)
		}
		if got := r.runStatus(ctx, commerce.RefundWorkflowID(draftID, key)); got != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			t.Fatalf("refund of %v ended %s, want canceled", bad, got)
		}
	}

	// Another client (a bare SDK start, as a TypeScript backend would):
	// the run's own check answers through the update, and a refund run
	// of this order naming another order's draft is FORBIDDEN.
	other, _ := r.written(ctx, input(uniqueKey("refund-other"), commerce.LineItem{SKU: item.SKU, Quantity: 1}))
	for want, in := range map[toolkit.Code]draftorder.RefundInput{
		toolkit.Forbidden:       {DraftOrderID: other.DraftOrderID},
		toolkit.InvalidArgument: {DraftOrderID: draft.DraftOrderID, Lines: []commerce.LineItem{{SKU: item.SKU, Quantity: 0}}},
	} {
		key := uniqueKey("rf-bare")
		id := commerce.RefundWorkflowID(draftID, key)
		in.Request = refundUser
		in.Request.IdempotencyKey = key
		uh, err := r.tc.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: r.tc.NewWithStartWorkflowOperation(workflows.OnceStartOptions(id, r.queue, workflows.FlowOrderSettle, "PRICING", "bare"),
				draftorder.RefundWorkflowName, in),
			UpdateOptions: sdkclient.UpdateWorkflowOptions{UpdateName: draftorder.UpdateRefund, Args: []any{draftorder.RefundAsk{Refund: &in}},
				WaitForStage: sdkclient.WorkflowUpdateStageCompleted},
		})
		if err == nil {
			err = uh.Get(ctx, nil)
		}
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != string(want) {
			t.Fatalf("bare start of %+v: %v, want %s", in, err, want)
		}
		if got := r.runStatus(ctx, id); got != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			t.Fatalf("bare start of %+v ended %s", in, got)
		}
	}

	// The rest, above the threshold: the answer is the approval staff
	// decide, with the facts they see.
	key := uniqueKey("rf-rest")
	id := commerce.RefundWorkflowID(draftID, key)
	st, err = c.Refund(ctx, draftID, cwclient.RefundRequest{Key: key, Reason: "damaged in transit", Request: refundUser})
	if err != nil || st.State != draftorder.StateRefundPending || st.Approvals.Pending == nil || st.Result != nil {
		t.Fatalf("the rest: %+v, %v", st, err)
	}
	pending := st.Approvals.Pending
	if len(pending.AllowedRoles) != 2 || pending.AllowedRoles[0] != "refunds" || len(pending.Facts) < 3 {
		t.Fatalf("pending approval %+v", pending)
	}
	done := make(chan draftorder.RefundStatus, 1)
	go func() {
		st, _ := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: key, Reason: "damaged in transit", UntilEnd: true, Request: refundUser})
		done <- st
	}()
	for _, who := range []string{"alice.support", "rita.refunds"} {
		d := sealtest.Seal(t, who, support.Decision{ApprovalID: pending.ApprovalID, Decision: "approve", Reason: "photos attached"})
		if err := r.tc.SignalWorkflow(ctx, id, "", approval.SignalApproval, approval.SignalOf(d)); err != nil {
			t.Fatal(err)
		}
	}
	st = <-done
	rest := draft.GrandTotal.Amount - unit
	if res := st.Result; res == nil || res.State != draftorder.StateRefunded || res.Approval == nil || res.Approval.Approver != "rita.refunds" ||
		res.Refund.Amount.Amount != rest || res.Refund.Remaining.Amount != 0 {
		t.Fatalf("the rest: %+v", st)
	}
	// Fully refunded: another key is refused; the same key is the same refund.
	if _, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: uniqueKey("rf-more"), Request: refundUser}); code(err) != toolkit.InvalidArgument {
		t.Fatalf("a refund of a refunded order: %v", err)
	}
	again, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: key, Request: refundUser})
	if err != nil || again.Result == nil || again.Result.Refund == nil || again.Result.Refund.RefundID != st.Result.Refund.RefundID {
		t.Fatalf("the same key again: %+v, %v", again, err)
	}
	var n int
	var sum int64
	if err := r.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_minor), 0) FROM refunds WHERE draft_order_id = $1`, draft.DraftOrderID).Scan(&n, &sum); err != nil ||
		n != 2 || sum != draft.GrandTotal.Amount {
		t.Fatalf("refund rows %d summing %d, want 2 summing %d (%v)", n, sum, draft.GrandTotal.Amount, err)
	}
}

// TestAttackRefundThresholdFromTheCaller: a refund run started by a bare
// SDK client with its own threshold (approve_above far above the amount)
// skips the staff decision, and the tool refuses the refund anyway: above
// the worker's configured threshold it refunds only with a staff approval
// of that very run (FORBIDDEN, approval_missing); nothing reaches Stripe.
func TestAttackRefundThresholdFromTheCaller(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour, func(c *config.Config) { c.RefundApprovalAbove = 100 })
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	draftID, draft := r.paid(ctx, "refund-attack", commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 1})
	key := uniqueKey("rf-attack")
	id := commerce.RefundWorkflowID(draftID, key)
	in := draftorder.RefundInput{Request: refundUser, DraftOrderID: draft.DraftOrderID, ApproveAbove: 1 << 40}
	in.Request.IdempotencyKey = key
	uh, err := r.tc.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: r.tc.NewWithStartWorkflowOperation(workflows.OnceStartOptions(id, r.queue, workflows.FlowOrderSettle, "PRICING", "attack"),
			draftorder.RefundWorkflowName, in),
		UpdateOptions: sdkclient.UpdateWorkflowOptions{UpdateName: draftorder.UpdateRefund, Args: []any{draftorder.RefundAsk{Refund: &in, UntilEnd: true}},
			WaitForStage: sdkclient.WorkflowUpdateStageCompleted},
	})
	var st draftorder.RefundStatus
	if err == nil {
		err = uh.Get(ctx, &st)
	}
	if err != nil || st.Result == nil || st.Result.State != draftorder.StateRefundRefused || st.Result.Code != toolkit.Forbidden ||
		st.Result.Refund != nil {
		t.Fatalf("a refund with the caller's own threshold: %+v, %v", st.Result, err)
	}
	var n int
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM refunds WHERE draft_order_id = $1`, draft.DraftOrderID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d refunds written (%v)", n, err)
	}
}
