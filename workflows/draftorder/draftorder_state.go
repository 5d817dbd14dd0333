package draftorder

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// ConfirmSignal is the payload of the confirm signal: the quote_hash of the
// total the user agrees to pay, exactly as published in the status query.
type ConfirmSignal struct {
	QuoteHash string `json:"quote_hash"`
}

// CancelSignal is the (optional) payload of the cancel signal.
type CancelSignal struct {
	// Reason is free text for the record; it is not shown in queries.
	Reason string `json:"reason,omitempty"`
}

// draftOrder is the state of one DraftOrder run. Handlers (query and signal
// receivers) only read it or append to the inboxes; the main coroutine
// makes every decision, in the order signals arrived.
type draftOrder struct {
	in        Input
	specs     flow.ToolSpecs
	state     string
	log       workflows.SignalLog
	approvals *approval.Gate

	// confirms holds confirmations (signals and updates) received while a
	// confirmation is awaited; awaitingConfirm says whether one is.
	confirms        []confirmMsg
	awaitingConfirm bool
	// confirmedHash is the quote_hash accepted by the current wait, until
	// the next wait begins (a later confirm of it is "already done").
	confirmedHash string
	cancelled     bool
	// waiting is the outage the order waits out now (draftorder_wait.go).
	waiting *WaitReason
	// over: the run returned (with a result or an error); update handlers
	// still waiting answer now. failed is the error it returned, if any.
	over   bool
	failed error
	// pastCancel is set once the draft order is being created: from then
	// on a cancel can no longer stop it.
	pastCancel bool

	round int
	// plan, priced and verdict are the current quote's origin choice,
	// prices and compliance verdict; refs their snapshots, which the
	// total is derived from (docs/quote-seals.md#what-a-total-is-derived-from).
	plan       *commerce.OriginPlan
	priced     *commerce.Quote
	verdict    *commerce.ComplianceVerdict
	refs       commerce.EvidenceRefs
	compliance *ComplianceSummary
	// cleared is the compliance answer the order goes on with (and the
	// approval that cleared it); a quote keeps it while the transport
	// mode is the same.
	cleared      *activities.ClearedCompliance
	total        *commerce.Total
	confirmation *PendingConfirmation
	approval     *approval.Outcome
	draft        *commerce.DraftOrder
	requotes     int
	// creates counts the create calls of the run (see create).
	creates  int
	evidence []workflows.EvidenceRef
	result   *Result
	// settle is the written draft's hold (draftorder_hold.go), in this run.
	settle *settle
}

// setup checks the input, then declares the query and the signals (with
// the descriptions the Web UI's signal form lists) before any activity runs.
func (d *draftOrder) setup(ctx workflow.Context, in Input) error {
	d.settle = newSettle(d.specs, &d.log)
	in, err := startCheck(ctx, in)
	if err != nil {
		return err
	}
	d.in, d.state, d.evidence = in, StateQuoting, []workflows.EvidenceRef{}
	if err := workflow.SetQueryHandlerWithOptions(ctx, workflows.QueryStatus, d.status, workflow.QueryHandlerOptions{
		Description: "State, pending confirmation (total and quote_hash) and approvals, rejected signals, totals and evidence of this draft order.",
	}); err != nil {
		return err
	}
	signals := workflows.NewListener(ctx)
	signals.On(ctx, SignalConfirm, workflow.SignalChannelOptions{
		Description: `The user confirms the published total: {"quote_hash": "sha256:…"} with the quote_hash from the status query. ` +
			`A hash other than the one currently published is rejected.`,
	}, func(ctx workflow.Context, raw converter.RawValue) {
		if d.awaitingConfirm {
			d.confirms = append(d.confirms, confirmMsg{raw: raw})
			return
		}
		d.refuseConfirm(ctx, raw)
	})
	signals.On(ctx, SignalCancel, workflow.SignalChannelOptions{
		Description: `The user abandons the order before it is created: {"reason": "…"} (optional).`,
	}, d.onCancel)
	d.approvals = approval.New(ctx, approval.Config{Flow: workflows.FlowDraftOrder, Window: in.ApprovalWindow, Request: in.Request,
		Log: &d.log, Specs: d.specs, Signals: signals})
	if err := d.settle.listen(ctx, signals); err != nil {
		return err
	}
	signals.Listen(ctx)
	if err := d.setUpdates(ctx); err != nil {
		return err
	}
	// A run started without them (by hand) gets the start's attributes;
	// a started one already has them and this adds no command.
	return workflows.UpsertFlowState(ctx, workflows.FlowDraftOrder, startState)
}

// onCancel records a cancel; the main coroutine acts on it at its next
// decision point (between steps, or at once while waiting for a person).
// Once the draft is written, a cancel is the hold's: it gives the stock
// back unless the order is paid or being settled.
func (d *draftOrder) onCancel(ctx workflow.Context, raw converter.RawValue) {
	var sig CancelSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil && err != workflows.ErrEmptySignal {
		d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalCancel, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
	if d.settle.begun {
		d.settle.onCancel(ctx)
		return
	}
	if d.pastCancel || d.result != nil {
		d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalCancel, Reason: workflows.RejectNotWaiting,
			Detail: "the draft order is already being created or has ended"})
		return
	}
	d.cancelled = true
}

// refuseConfirm answers a confirm that arrived while none is awaited.
func (d *draftOrder) refuseConfirm(ctx workflow.Context, raw converter.RawValue) {
	var sig ConfirmSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil {
		d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalConfirm, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
	d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalConfirm, Reason: workflows.RejectNotWaiting,
		Detail: fmt.Sprintf("no confirmation is awaited (state %s)", d.state)})
}

// status answers the status query from a copy of the state.
func (d *draftOrder) status() (Status, error) {
	s := Status{
		State: d.state, Destination: d.in.ShipTo.Country, Currency: d.in.Currency,
		Approvals: d.approvals.Status(), Rejected: d.log.Snapshot(), Compliance: d.compliance,
		Total: d.total, DraftOrder: d.draft, Requotes: d.requotes, Origins: d.originsSummary(),
		Evidence: append([]workflows.EvidenceRef{}, d.evidence...), Result: d.result, Waiting: d.waiting,
	}
	if d.settle.begun {
		o, _ := d.settle.status()
		s.Order = &o
	}
	if d.awaitingConfirm && d.confirmation != nil {
		c := *d.confirmation
		s.Confirmation = &c
	}
	return s, nil
}

// setState moves to state and keeps CartwrightState current.
func (d *draftOrder) setState(ctx workflow.Context, state string) error {
	d.state = state
	return workflows.UpsertFlowState(ctx, workflows.FlowDraftOrder, state)
}

// record keeps the evidence reference of a successful tool call.
func (d *draftOrder) record(step string, env toolkit.Response) {
	d.evidence = append(d.evidence, workflows.EvidenceRefOf(step, env))
}

// recordAnswer keeps the evidence reference of a tool's answer: every
// success, and a refusal whose envelope names its snapshot (the compliance
// decision that blocked the order is evidence like any other answer).
func (d *draftOrder) recordAnswer(step string, env toolkit.Response, err error) {
	if err == nil || env.SnapshotID() != "" {
		d.record(step, env)
	}
}

// step names a tool call of the current quote, for correlation ids
// and evidence references.
func (d *draftOrder) step(name string) string {
	return roundStep(d.round, name)
}

// roundStep names step name of quote n.
func roundStep(n int, name string) string {
	return fmt.Sprintf("q%d/%s", n, name)
}

// request is the envelope of one tool call.
func (d *draftOrder) request(ctx workflow.Context, step string) toolkit.Request {
	req := flow.Envelope(ctx, d.in.Request, step)
	// The idempotency key scopes the one write (docs/envelope.md#idempotency);
	// read-only calls do not carry it.
	req.IdempotencyKey = ""
	return req
}

// end builds a final result; a state with a code carries its error object
// (outcomeError).
func (d *draftOrder) end(state string, code toolkit.Code, msg string) *Result {
	return &Result{State: state, Code: code, Message: msg, Error: outcomeError(state, code, msg)}
}

// finish records the result, publishes the final state and returns it.
func (d *draftOrder) finish(ctx workflow.Context, res *Result) (Result, error) {
	d.conclude(ctx, res)
	if err := d.setState(ctx, res.State); err != nil {
		return *res, err
	}
	return *res, nil
}

// conclude records the draft order's result: the update answers and the
// status have it from here on, and the Web UI its details. A written
// draft's run goes on holding it (draftorder_hold.go), whose state
// CartwrightState shows instead.
func (d *draftOrder) conclude(ctx workflow.Context, res *Result) {
	res.Total, res.DraftOrder, res.Approval = d.total, d.draft, d.approval
	res.Origins = d.originsSummary()
	res.Evidence = append([]workflows.EvidenceRef{}, d.evidence...)
	d.result, d.awaitingConfirm = res, false
	// Counted here, once per run: the SDK's workflow metrics handler
	// records nothing while replaying, and a metric is not a command.
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"state": res.State}).
		Counter(workflows.MetricDraftOrdersFinished).Inc(1)
	details := fmt.Sprintf("**Draft order %s**", strings.ReplaceAll(strings.ToLower(res.State), "_", " "))
	if res.Message != "" {
		details += ": " + res.Message
	}
	workflow.SetCurrentDetails(ctx, details)
}

// cancelledResult is the result of a cancel honoured before creation.
func (d *draftOrder) cancelledResult() *Result {
	return d.end(StateCancelled, "", "cancelled by the user before the draft order was created")
}

// outcome turns a tool failure into a final result: a business answer
// (the order cannot proceed as asked, draftorder_refusal.go) or an outage
// that outlived the order's window (outlive.go). Only what is neither — a
// cancelled run — fails the workflow.
func (d *draftOrder) outcome(err error) (*Result, error) {
	if end := d.refused(err); end != nil {
		return end, nil
	}
	if end := d.unavailable(err); end != nil {
		return end, nil
	}
	return nil, err
}
