package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/approval"
)

// run is the draft order's main line: quote, approval if needed, total,
// confirmation, creation. Every step that can end the flow returns a result.
func (d *draftOrder) run(ctx workflow.Context) (Result, error) {
	// Onboarding gates selling: a merchant that cannot take charges is
	// refused before anything is quoted (merchant_gate.go).
	if end, err := d.gateMerchant(ctx); end != nil || err != nil {
		return d.stop(ctx, end, err)
	}
	if end, err := d.quote(ctx, ""); end != nil || err != nil {
		return d.stop(ctx, end, err)
	}
	if d.cancelled {
		return d.finish(ctx, d.cancelledResult())
	}
	if end, err := d.totalled(ctx); end != nil || err != nil {
		return d.stop(ctx, end, err)
	}
	return d.confirmAndCreate(ctx)
}

// totalled brings the current quote to its total: support staff clear a
// verdict that needs a person, then the total is derived — after a fresh
// quote when the approval outlived the prices.
func (d *draftOrder) totalled(ctx workflow.Context) (*Result, error) {
	for d.total == nil {
		if d.cleared == nil || d.cleared.SnapshotID != d.refs.ComplianceSnapshotID {
			if end, err := d.approve(ctx); end != nil || err != nil {
				return end, err
			}
		}
		// PRICING lasts milliseconds: the total is derived in the worker
		// inside the task that took the approval, so the search attribute
		// keeps the previous state until the total is published (an
		// upsert is a history event).
		d.state = StatePricing
		var end *Result
		var err error
		if d.quoteExpired(ctx) {
			// The approval took longer than the quote lives: the user must
			// see current prices, so quote again first.
			d.requotes++
			end, err = d.quote(ctx, d.priced.PriceHash)
		} else {
			end, err = d.price(ctx)
		}
		if end != nil || err != nil {
			return end, err
		}
	}
	return nil, nil
}

// stop returns a final result, or fails the workflow with err.
func (d *draftOrder) stop(ctx workflow.Context, end *Result, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return d.finish(ctx, end)
}

// quoteExpired reports whether the quotes behind the current prices are
// past their TTL (the earliest of pricing and the origin choice, or the
// total's).
func (d *draftOrder) quoteExpired(ctx workflow.Context) bool {
	now := workflow.Now(ctx)
	if d.total != nil {
		return !now.Before(d.total.ExpiresAt)
	}
	return !now.Before(d.priced.ExpiresAt) || !now.Before(d.plan.ExpiresAt)
}

// approve asks support staff to clear an uncertain compliance answer.
func (d *draftOrder) approve(ctx workflow.Context) (*Result, error) {
	if err := d.setState(ctx, StateAwaitingApproval); err != nil {
		return nil, err
	}
	out, err := d.approvals.Request(ctx, approval.Request{
		Subject:  "compliance review of a draft order to " + d.in.ShipTo.Country,
		Question: "The compliance check could not clear this basket with enough confidence. Approve to let the user see the total and order; reject to block the order.",
		Facts:    d.approvalFacts(),
		// Who may clear it is the verdict's own answer (a compliance
		// review is compliance's call, or an admin's); the roster check
		// refuses anyone else (docs/approvals.md#sealed-decisions).
		AllowedRoles: d.verdict.ReviewRoles,
		Window:       d.in.ApprovalWindow,
		Interrupt:    func() bool { return d.cancelled },
	})
	if err != nil {
		return nil, err
	}
	d.approval = &out
	switch out.Decision {
	case approval.Interrupted:
		return d.cancelledResult(), nil
	case approval.Expired:
		return d.end(StateApprovalExpired, toolkit.Timeout, "no support-staff decision within "+d.in.ApprovalWindow.String()).
			withDetail("approval_id", out.ApprovalID), nil
	}
	if !out.Approved() {
		return d.end(StateApprovalRejected, toolkit.ComplianceBlocked, fmt.Sprintf("rejected by %s: %s", out.Approver, out.Reason)).
			withDetail("approval_id", out.ApprovalID), nil
	}
	d.cleared = &activities.ClearedCompliance{SnapshotID: d.refs.ComplianceSnapshotID, Mode: d.verdict.TransportMode}
	if out.Evidence != nil {
		d.cleared.ApprovalSnapshotID = out.Evidence.SnapshotID
	}
	return nil, nil
}

// confirmAndCreate publishes the total, waits for the user's confirmation
// and creates the draft order. A confirmation of an expired quote
// re-quotes: same prices go ahead, changed prices are published again as
// PRICE_CHANGED and need a new confirmation.
func (d *draftOrder) confirmAndCreate(ctx workflow.Context) (Result, error) {
	previous := ""
	for {
		hash, end, err := d.awaitConfirmation(ctx, previous)
		if end != nil || err != nil {
			return d.stop(ctx, end, err)
		}
		changed, end, err := d.freshen(ctx, hash, d.quoteExpired(ctx))
		if end != nil || err != nil {
			return d.stop(ctx, end, err)
		}
		if changed {
			previous = hash
			continue
		}
		if d.cancelled {
			// Cancelled while the confirmed quote was being refreshed:
			// nothing is written yet, so the cancel still wins.
			return d.finish(ctx, d.cancelledResult())
		}
		res, err := d.create(ctx, hash)
		if toolkit.CodeOf(err) == toolkit.NeedsUserConfirmation {
			// The tool found the total expired (its clock, or retries that
			// outlived the quote): refresh once and ask again only if the
			// prices moved.
			if changed, end, err = d.freshen(ctx, hash, true); end != nil || err != nil {
				return d.stop(ctx, end, err)
			}
			if changed {
				previous = hash
				continue
			}
			res, err = d.create(ctx, hash)
		}
		if err != nil {
			end, err := d.outcome(err)
			return d.stop(ctx, end, err)
		}
		// The written draft's stock hold and payment go on in this run
		// (draftorder_hold.go).
		return d.created(ctx, res)
	}
}

// freshen re-quotes when needed and reports whether the confirmed total
// changed.
func (d *draftOrder) freshen(ctx workflow.Context, confirmed string, needed bool) (bool, *Result, error) {
	if !needed {
		return false, nil, nil
	}
	if err := d.setState(ctx, StateRequoting); err != nil {
		return false, nil, err
	}
	// The origin is chosen again: stock and prices may have moved since
	// (docs/tools.md#origin-choice).
	d.requotes++
	if end, err := d.quote(ctx, d.priced.PriceHash); end != nil || err != nil {
		return false, end, err
	}
	if end, err := d.totalled(ctx); end != nil || err != nil {
		return false, end, err
	}
	return d.total.QuoteHash != confirmed, nil, nil
}

// awaitConfirmation publishes the total and waits for a confirm carrying its
// quote_hash, a cancel, or the end of the window. previous is the hash the
// user confirmed before the price changed ("" the first time).
func (d *draftOrder) awaitConfirmation(ctx workflow.Context, previous string) (string, *Result, error) {
	state := StateNeedsConfirm
	if previous != "" {
		state = StatePriceChanged
	}
	if err := d.setState(ctx, state); err != nil {
		return "", nil, err
	}
	t := d.total
	deadline := workflow.Now(ctx).Add(d.in.ConfirmWindow)
	d.confirmation = &PendingConfirmation{
		QuoteHash: t.QuoteHash, GrandTotal: t.GrandTotal, DueOnDelivery: t.DueOnDelivery,
		QuoteExpiresAt: t.ExpiresAt, ConfirmBy: deadline.UTC(), PriceChanged: previous != "", PreviousQuoteHash: previous,
		Example: fmt.Sprintf(`{"quote_hash":%q}`, t.QuoteHash),
	}
	if d.plan != nil {
		d.confirmation.ShipsFrom = d.plan.Origins()
	}
	workflow.SetCurrentDetails(ctx, d.confirmDetails())
	d.awaitingConfirm, d.pastCancel, d.confirmedHash = true, false, ""
	defer func() { d.awaitingConfirm = false }()
	for {
		for len(d.confirms) > 0 {
			m := d.confirms[0]
			d.confirms = d.confirms[1:]
			if d.acceptConfirm(ctx, m) {
				d.refuseQueuedConfirms(ctx)
				return t.QuoteHash, nil, nil
			}
		}
		if d.cancelled {
			return "", d.cancelledResult(), nil
		}
		left := deadline.Sub(workflow.Now(ctx))
		if left <= 0 {
			return "", d.expiredResult(), nil
		}
		ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
			Timeout:      left,
			TimerOptions: workflow.TimerOptions{Summary: "confirmation window"},
		}, func() bool { return len(d.confirms) > 0 || d.cancelled })
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", d.expiredResult(), nil
		}
	}
}
