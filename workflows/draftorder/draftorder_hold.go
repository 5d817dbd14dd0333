package draftorder

import (
	"regexp"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
)

// created ends the draft order's part of the run with the written draft
// (the confirmation's answer and the status have it at once) and, for a
// draft that holds stock, goes on as its hold in the same run: the charge,
// then the payment, a cancel or the hold's end, and the stock moved once
// (settle_run.go, docs/stock.md). The run's result is the draft's, with
// Settled saying how the hold ended. A dry run wrote nothing and ends here.
func (d *draftOrder) created(ctx workflow.Context, res *Result) (Result, error) {
	if d.draft == nil || d.draft.DraftOrderID == "" || d.draft.Status == commerce.DraftStatusValidated {
		return d.finish(ctx, res)
	}
	d.conclude(ctx, res)
	if err := d.settle.begin(ctx, holdInput{Request: d.in.Request, DraftOrder: *d.draft,
		MerchantID: d.in.MerchantID, PollEvery: d.in.PaymentPollEvery}); err != nil {
		return *res, err
	}
	settled, err := d.settle.run(ctx)
	if err != nil {
		return Result{}, err
	}
	out := *res
	out.Settled = &settled
	return out, nil
}

// merchantIDPattern is merchants.merchant_id's check (migration 00020).
var merchantIDPattern = regexp.MustCompile(`^m_[a-z0-9_]{3,60}$`)
