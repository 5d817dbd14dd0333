package approval

import (
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// UpdateApproval decides the pending approval (the approval signal's rule)
// and returns the decision.
const UpdateApproval = "decide_approval"

// Answer is the decide_approval update's answer.
type Answer struct {
	// AlreadyDone is true when this approver had already made this
	// decision on this approval (a retry): the recorded outcome, no second
	// record.
	AlreadyDone bool `json:"already_done"`
	// Outcome is the recorded decision, with its evidence.
	Outcome Outcome `json:"outcome"`
}

// approvalAsk is a decide_approval update waiting in the inbox.
type approvalAsk struct {
	answered bool
	outcome  Outcome
	refusal  *workflows.RejectedSignal
}

// SetUpdate declares the decide_approval update (the draft order's; the
// onboarding keeps the signal alone). An update takes the same path as an
// approval signal: it joins the inbox as the same payload, in arrival
// order, and is checked and recorded by the same code; only the answer
// goes to its caller instead of the signal log. over reports that the
// owning run returned.
func (a *Gate) SetUpdate(ctx workflow.Context, id string, over func() bool) error {
	a.asks = map[*commonpb.Payload]*approvalAsk{}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateApproval,
		func(ctx workflow.Context, in Signal) (Answer, error) {
			return a.decideUpdate(ctx, id, in, over)
		},
		workflow.UpdateHandlerOptions{
			Validator: func(_ workflow.Context, in Signal) error { return a.validate(id, in) },
			Description: `Decide the pending approval and get the answer: a decision sealed by the codec server ` +
				`({"approval_id", "decision", "approver", "reason", "seal"}, as the approval signal; starter draft-order approve|reject obtains it).`,
		})
}

// validate refuses what the payload alone shows is wrong, or what does not
// match the pending approval; the approver is checked by the record call.
func (a *Gate) validate(id string, in Signal) error {
	refuse := func(reason, detail string) error {
		return workflows.UpdateRefusal(id, UpdateApproval, reason, detail)
	}
	if problem := in.problem(); problem != "" {
		if in.unsealedOnly() {
			return refuse(workflows.RejectUnauthenticated, unsealedDetail)
		}
		return refuse(workflows.RejectMalformed, problem)
	}
	// Only the record call can verify a seal (the workflow holds no key);
	// one that is absent is refused here, before the update is accepted
	// (docs/approvals.md#sealed-decisions).
	if in.Seal == nil {
		return refuse(workflows.RejectUnauthenticated, unsealedDetail+" (a typed approver is not enough)")
	}
	switch {
	case a.decided[in.ApprovalID]:
		if a.sameDecision(in) != nil {
			return nil
		}
		return refuse(workflows.RejectDuplicateApproval, "approval "+in.ApprovalID+" was already decided")
	case a.pending == nil:
		return refuse(workflows.RejectNotWaiting, "no approval is pending")
	case in.ApprovalID != a.pending.ApprovalID:
		return refuse(workflows.RejectStaleApproval, "approval "+in.ApprovalID+" is not the pending one ("+a.pending.ApprovalID+")")
	}
	return nil
}

// decideUpdate queues the decision as an approval payload and waits for
// the wait loop's answer.
func (a *Gate) decideUpdate(ctx workflow.Context, id string, in Signal, over func() bool) (Answer, error) {
	if o := a.sameDecision(in); o != nil {
		return Answer{AlreadyDone: true, Outcome: *o}, nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(in)
	if err != nil {
		return Answer{}, activities.ApplicationError(toolkit.Errorf(toolkit.InvalidArgument, "%v", err))
	}
	ask := &approvalAsk{}
	a.asks[p] = ask
	a.inbox = append(a.inbox, converter.NewRawValue(p))
	defer delete(a.asks, p)
	if err := workflow.Await(ctx, func() bool { return ask.answered || over() }); err != nil {
		return Answer{}, err
	}
	switch {
	case ask.refusal != nil:
		if o := a.sameDecision(in); o != nil {
			return Answer{AlreadyDone: true, Outcome: *o}, nil
		}
		return Answer{}, activities.ApplicationError(workflows.RejectionError(id, *ask.refusal))
	case !ask.answered:
		return Answer{}, activities.ApplicationError(toolkit.Errorf(toolkit.Conflict, "%s ended before the decision was taken", id))
	}
	return Answer{Outcome: ask.outcome}, nil
}

// sameDecision is the recorded outcome of in's approval when it was this
// approver's same decision; nil otherwise.
func (a *Gate) sameDecision(in Signal) *Outcome {
	for i := range a.decisions {
		o := &a.decisions[i]
		if o.ApprovalID == in.ApprovalID && o.Decision == in.Decision && o.Approver == in.Approver {
			return o
		}
	}
	return nil
}

// refuseRaw answers a refused payload: an update's caller gets the reason,
// a signal's refusal goes to the signal log.
func (a *Gate) refuseRaw(ctx workflow.Context, raw converter.RawValue, r workflows.RejectedSignal) {
	if ask := a.asks[raw.Payload()]; ask != nil {
		r.Signal, r.At = UpdateApproval, workflows.FmtTime(workflow.Now(ctx))
		ask.answered, ask.refusal = true, &r
		return
	}
	a.reject(ctx, r)
}

// answer gives an update its decision.
func (a *Gate) answer(raw converter.RawValue, out Outcome) {
	if ask := a.asks[raw.Payload()]; ask != nil {
		ask.answered, ask.outcome = true, out
	}
}
