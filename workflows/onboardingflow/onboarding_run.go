package onboardingflow

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// onboardingRun is one run of the Onboarding workflow: the carried state
// plus what belongs to this run only (channels, timers, the approval piece).
type onboardingRun struct {
	in        Input
	specs     flow.ToolSpecs
	st        *Progress
	base      toolkit.Request
	wfID      string
	approvals *approval.Gate
	returned  workflow.ReceiveChannel
	updated   workflow.ReceiveChannel
	dashboard workflow.ReceiveChannel
	deadline  workflow.Future
	// steps numbers this run's tool calls, for their correlation ids.
	steps int
}

// newOnboardingRun checks the input, restores or creates the state and
// declares the query and the signals before anything else happens.
func newOnboardingRun(ctx workflow.Context, in Input, specs flow.ToolSpecs) (*onboardingRun, error) {
	info := workflow.GetInfo(ctx)
	if err := CheckMerchantID(in.MerchantID); err != nil {
		return nil, flow.InvalidInput("%s", err.Error())
	}
	if want, _ := ID(in.MerchantID); info.WorkflowExecution.ID != want {
		return nil, flow.InvalidInput("workflow id must be %s", want)
	}
	if in.Deadline <= 0 {
		in.Deadline = DefaultDeadline
	}
	if in.StatusRetryDelay <= 0 {
		in.StatusRetryDelay = DefaultStatusRetryDelay
	}
	if in.ContinueAsNewAfter <= 0 {
		in.ContinueAsNewAfter = DefaultContinueAsNewAfter
	}
	now := workflow.Now(ctx).UTC()
	st := in.State
	if st == nil {
		chain := info.FirstRunID
		if chain == "" {
			chain = info.WorkflowExecution.RunID
		}
		st = &Progress{
			MerchantID: in.MerchantID, ChainID: chain, StartedAt: now, DeadlineAt: now.Add(in.Deadline),
			Logins: []LinkRef{}, Explanations: []Explanation{}, Decisions: []approval.Outcome{},
			SeenEvents: []string{}, Evidence: []workflows.EvidenceRef{},
		}
	}
	in.State = nil // the carried state lives in o.st; the input must not hold a stale copy
	st.Runs++
	o := &onboardingRun{in: in, specs: specs, st: st, wfID: info.WorkflowExecution.ID, base: in.Request}
	if o.base.Actor.Type == "" {
		o.base.Actor = toolkit.Actor{Type: toolkit.ActorSystem, ID: "onboarding-workflow"}
	}
	if o.base.UserID == "" {
		o.base.UserID = in.MerchantID
	}
	if err := workflow.SetQueryHandlerWithOptions(ctx, workflows.QueryStatus, o.status, workflow.QueryHandlerOptions{
		Description: "State, account status, due requirements with cited explanations, the current relink URL and login " +
			"links (hash, expiry and evidence snapshot; never the URL), pending approval, signals and last error.",
	}); err != nil {
		return nil, err
	}
	o.returned = workflow.GetSignalChannelWithOptions(ctx, SignalReturned, workflow.SignalChannelOptions{
		Description: `The merchant came back from Stripe's onboarding page: {} on return_url, {"refresh": true} on refresh_url ` +
			`(the link expired or was used; a new one is made if requirements are still due).`,
	})
	o.updated = workflow.GetSignalChannelWithOptions(ctx, SignalAccountUpdated, workflow.SignalChannelOptions{
		Description: `Stripe reported a change to the account (sent by the webhook receiver): {"event_id": "evt_…", "account_id": "acct_…"}.`,
	})
	o.dashboard = workflow.GetSignalChannelWithOptions(ctx, SignalDashboard, workflow.SignalChannelOptions{
		Description: `The merchant asked for the Express Dashboard: {} makes a new single-use login link (see the status query).`,
	})
	signals := workflows.NewListener(ctx)
	o.approvals = approval.New(ctx, approval.Config{Flow: workflows.FlowOnboarding, Window: in.ApprovalWindow, Request: o.base,
		Log: &st.Log, Specs: specs, Signals: signals})
	signals.Listen(ctx)
	o.deadline = workflow.NewTimerWithOptions(ctx, st.DeadlineAt.Sub(now), workflow.TimerOptions{Summary: "onboarding deadline"})
	workflow.Go(ctx, o.reviewLoop)
	state := st.State
	if state == "" {
		state = StateReadingMerchant
	}
	return o, o.setState(ctx, state)
}

// run is the main loop: act on what is known, then wait for a signal, the
// retry timer or the deadline.
func (o *onboardingRun) run(ctx workflow.Context) (Result, error) {
	st := o.st
	if st.StripeAccountID == "" && !st.Final {
		if err := o.readMerchant(ctx); err != nil {
			return Result{}, err
		}
	}
	for !st.Final {
		if o.deadlinePassed(ctx) {
			o.finish(StateDeadlineExceeded)
			break
		}
		if st.NeedRead && !o.readDeferred(ctx) {
			if err := o.readAccount(ctx); err != nil {
				return Result{}, err
			}
			if st.Final {
				break
			}
		}
		if st.Account != nil && st.Account.Enabled() {
			o.finish(StateOnboarded)
			break
		}
		if err := o.explain(ctx); err != nil {
			return Result{}, err
		}
		o.ensureRelink(ctx)
		o.serveDashboard(ctx)
		if o.shouldContinueAsNew(ctx) {
			return Result{}, o.continueAsNew(ctx)
		}
		if err := o.setState(ctx, o.waitingState()); err != nil {
			return Result{}, err
		}
		if err := o.wait(ctx); err != nil {
			return Result{}, err
		}
	}
	return o.end(ctx)
}

// waitingState says who the workflow waits for.
func (o *onboardingRun) waitingState() string {
	if o.st.Account != nil && len(o.st.Account.Due()) == 0 {
		return StateAwaitingStripe
	}
	return StateAwaitingMerchant
}

// wait blocks until a signal, the deadline or the read-retry timer, then
// takes every other signal already queued, so a burst costs one read.
func (o *onboardingRun) wait(ctx workflow.Context) error {
	sel := workflow.NewSelector(ctx)
	o.addSignals(ctx, sel)
	sel.AddFuture(o.deadline, func(workflow.Future) {})
	if !o.st.RetryReadAt.IsZero() {
		tctx, cancel := workflow.WithCancel(ctx)
		defer cancel() // a signal came first: drop the timer
		d := o.st.RetryReadAt.Sub(workflow.Now(ctx))
		sel.AddFuture(workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: "read the account again"}),
			func(workflow.Future) { o.st.RetryReadAt = time.Time{} })
	}
	sel.Select(ctx)
	o.drain(ctx)
	return ctx.Err()
}

// deadlinePassed reports whether the onboarding's deadline has come.
func (o *onboardingRun) deadlinePassed(ctx workflow.Context) bool {
	return o.deadline.IsReady() || !workflow.Now(ctx).Before(o.st.DeadlineAt)
}

// readDeferred: a failed read waits for its retry time (a signal clears it).
func (o *onboardingRun) readDeferred(ctx workflow.Context) bool {
	return !o.st.RetryReadAt.IsZero() && workflow.Now(ctx).Before(o.st.RetryReadAt)
}

// shouldContinueAsNew: the history is long (or the server says so), and no
// support-staff review is open, because an approval id belongs to its run.
func (o *onboardingRun) shouldContinueAsNew(ctx workflow.Context) bool {
	if o.approvals.Pending() || o.reviewQueued() {
		return false
	}
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= o.in.ContinueAsNewAfter
}

// continueAsNew takes every queued signal into the state first (a signal
// left in a channel would die with this run), then carries the state over.
func (o *onboardingRun) continueAsNew(ctx workflow.Context) error {
	o.drain(ctx)
	o.st.Decisions = append(o.st.Decisions, o.approvals.Status().Decisions...)
	next := o.in
	next.State = o.st
	workflow.GetLogger(ctx).Info("onboarding continues as new", "runs", o.st.Runs,
		"history_length", workflow.GetInfo(ctx).GetCurrentHistoryLength())
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}

// finish records a final state; end does the rest.
func (o *onboardingRun) finish(state string) {
	o.st.State, o.st.Final = state, true
}

// end closes an open review (its answer no longer matters), publishes the
// final state and builds the result.
func (o *onboardingRun) end(ctx workflow.Context) (Result, error) {
	if err := workflow.Await(ctx, func() bool { return !o.approvals.Pending() }); err != nil {
		return Result{}, err
	}
	for i := range o.st.Explanations {
		if r := o.st.Explanations[i].Review; r == ReviewQueued || r == ReviewPending {
			o.st.Explanations[i].Review = ReviewDropped
		}
	}
	if err := o.setState(ctx, o.st.State); err != nil {
		return Result{}, err
	}
	st := o.st
	res := Result{
		MerchantID: st.MerchantID, StripeAccountID: st.StripeAccountID, State: st.State,
		Due: []string{}, Explanations: st.Explanations, Runs: st.Runs, StatusReads: st.StatusReads, LastError: st.LastError,
	}
	if st.Account != nil {
		res.ChargesEnabled, res.PayoutsEnabled, res.Due = st.Account.ChargesEnabled, st.Account.PayoutsEnabled, nonNilList(st.Account.Due())
	}
	return res, nil
}

// setState publishes the state in the state struct and CartwrightState.
func (o *onboardingRun) setState(ctx workflow.Context, state string) error {
	o.st.State = state
	return workflows.UpsertFlowState(ctx, workflows.FlowOnboarding, state)
}

// status answers the status query with a copy of the state.
func (o *onboardingRun) status() (Status, error) {
	s := Status{Progress: *o.st, Due: []string{}, Approval: o.approvals.Status()}
	s.Decisions = append(append([]approval.Outcome{}, o.st.Decisions...), s.Approval.Decisions...)
	s.Explanations = append([]Explanation{}, o.st.Explanations...)
	s.Logins = append([]LinkRef{}, o.st.Logins...)
	s.Log = o.st.Log.Snapshot()
	if o.st.Account != nil {
		s.Due = nonNilList(o.st.Account.Due())
	}
	return s, nil
}

func nonNilList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// stepError records a failure the workflow survives.
func (o *onboardingRun) stepError(ctx workflow.Context, step string, err error) {
	te := toolkit.AsError(err)
	o.st.LastError = &StepError{Step: step, Code: te.Code, Message: te.Message, At: workflow.Now(ctx).UTC()}
	workflow.GetLogger(ctx).Warn("onboarding step failed", "step", step, "error_code", string(te.Code))
}

func (o *onboardingRun) addEvidence(ref workflows.EvidenceRef) {
	o.st.Evidence = append(o.st.Evidence, ref)
	if len(o.st.Evidence) > maxEvidence {
		o.st.Evidence = o.st.Evidence[len(o.st.Evidence)-maxEvidence:]
	}
}
