package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// SignalApproval is the signal support staff send to decide an approval.
const SignalApproval = "approval"

// DefaultWindow is how long an approval waits when neither the
// request nor the configuration says (config ApprovalWindow's default).
const DefaultWindow = 24 * time.Hour

// Outcomes of an approval besides approve and reject.
const (
	// Expired: nobody decided within the window.
	Expired = "expired"
	// Interrupted: the owner's Interrupt condition ended the wait
	// (e.g. the user cancelled).
	Interrupted = "interrupted"
)

var (
	IDPattern       = support.ApprovalIDPattern
	approverPattern = support.StaffIDPattern
)

// Signal is the payload of the approval signal as the workflow
// receives it: a decision the codec server sealed for the signed-in staff
// member (docs/approvals.md#sealed-decisions), e.g.
// {"approval_id":"apr_…","decision":"approve","approver":"bob.compliance","seal":{…}}.
// Staff send only approval_id, decision and reason.
type Signal struct {
	// ApprovalID must be the id of the approval currently requested.
	ApprovalID string `json:"approval_id"`
	// Decision is approve or reject.
	Decision string `json:"decision"`
	// Approver is the staff id of the person deciding, written by the
	// codec server: the seal vouches for it, never the sender.
	Approver string `json:"approver,omitempty"`
	// Reason is required for a rejection.
	Reason string `json:"reason,omitempty"`
	// Seal authenticates the approver and the decision; without a valid
	// one the decision is refused (RejectUnauthenticated).
	Seal *support.Seal `json:"seal,omitempty"`
}

// SignalOf is the approval payload of a sealed decision.
func SignalOf(d support.SealedDecision) Signal {
	return Signal{ApprovalID: d.ApprovalID, Decision: d.Decision, Approver: d.Approver, Reason: d.Reason, Seal: d.Seal}
}

// Config sets up the approval piece for one workflow.
type Config struct {
	// Flow names the owning flow (CartwrightFlow), e.g. draft_order.
	Flow string
	// Window is the default time to wait for a decision; 0 means
	// DefaultWindow.
	Window time.Duration
	// Request is the envelope base of the owner's tool calls (user_id,
	// request_id, locale …). The piece sets actor and correlation id.
	Request toolkit.Request
	// Log receives the rejected approval signals; the owner shares it with
	// its own signals so the status query shows one list.
	Log *workflows.SignalLog
	// Specs hold support.record_approval's spec (the owner's tool specs).
	Specs flow.ToolSpecs
	// Signals is the owner's listener: decisions arrive through it, with
	// the owner's own signals, before the owner starts it.
	Signals *workflows.Listener
}

// Request is one decision the owner asks support staff for.
type Request struct {
	// Subject names what is decided in a few words, without personal data;
	// it goes into evidence, e.g. "compliance review".
	Subject string
	// Question is what staff must decide, shown in the Web UI.
	Question string
	// Facts are the points staff decide on, one line each, no personal data.
	Facts []string
	// AllowedRoles limits who may decide (support, compliance, admin);
	// empty means any active staff member.
	AllowedRoles []string
	// Window overrides ApprovalConfig.Window for this request.
	Window time.Duration
	// Interrupt, when set, is checked whenever the workflow wakes; once it
	// returns true the wait ends with Interrupted.
	Interrupt func() bool
}

// Pending is the approval currently waited for, as the status query
// shows it.
type Pending struct {
	ApprovalID   string    `json:"approval_id"`
	Flow         string    `json:"flow"`
	Subject      string    `json:"subject"`
	Question     string    `json:"question"`
	Facts        []string  `json:"facts,omitempty"`
	AllowedRoles []string  `json:"allowed_roles,omitempty"`
	RequestedAt  time.Time `json:"requested_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	// Example and ExampleReject are ready-to-edit payloads of the approval
	// signal, to approve and to reject, as JSON objects (not strings), so a
	// copy from the query result is valid JSON as it stands.
	Example       json.RawMessage `json:"example"`
	ExampleReject json.RawMessage `json:"example_reject"`
	// LastRefusal is the last decision refused while this approval waits,
	// with what to send instead; the Web UI's current details show it.
	LastRefusal *workflows.RejectedSignal `json:"last_refusal,omitempty"`
}

// Outcome is how an approval request ended.
type Outcome struct {
	ApprovalID string `json:"approval_id"`
	Subject    string `json:"subject"`
	// Decision is approve, reject, expired or interrupted.
	Decision     string `json:"decision"`
	Approver     string `json:"approver,omitempty"`
	ApproverRole string `json:"approver_role,omitempty"`
	Reason       string `json:"reason,omitempty"`
	// SealID names the verified seal of the decision
	// (docs/approvals.md#sealed-decisions); empty for decisions recorded
	// before seals.
	SealID string    `json:"seal_id,omitempty"`
	At     time.Time `json:"at"`
	// Evidence is the snapshot of support.record_approval for a decision.
	Evidence *workflows.EvidenceRef `json:"evidence,omitempty"`
}

// Approved reports whether staff approved.
func (o Outcome) Approved() bool { return o.Decision == support.DecisionApprove }

// Status is the approval part of a status query.
type Status struct {
	Pending   *Pending  `json:"pending,omitempty"`
	Decisions []Outcome `json:"decisions"`
}

// Gate is the reusable support-staff approval piece (docs/approvals.md).
// Create it with New at the start of the workflow, so the approval
// signal is declared (with its description) before anything else happens; then
// call Request whenever a human must decide.
type Gate struct {
	cfg       Config
	inbox     []converter.RawValue
	pending   *Pending
	decided   map[string]bool
	decisions []Outcome
	seq       int
	// attempts numbers the record calls, for their correlation ids.
	attempts int
	// asks are the decide_approval updates in the inbox, by payload.
	asks map[*commonpb.Payload]*approvalAsk
}

// New declares the approval signal and starts receiving it. Signals
// that arrive while no approval is pending are rejected and recorded.
func New(ctx workflow.Context, cfg Config) *Gate {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Log == nil {
		cfg.Log = &workflows.SignalLog{}
	}
	a := &Gate{cfg: cfg, decided: map[string]bool{}, decisions: []Outcome{}}
	cfg.Signals.On(ctx, SignalApproval, workflow.SignalChannelOptions{
		Description: `Support staff decide a pending approval: {"approval_id": "apr_…", "decision": "approve" | "reject", ` +
			`"reason": "…" (required to reject)}, sent after signing in at the codec server, which writes your staff id and seals it; ` +
			`an unsealed decision is refused. The approval_id is in the status query and the workflow's current details.`,
	}, func(ctx workflow.Context, raw converter.RawValue) {
		if a.pending != nil {
			a.inbox = append(a.inbox, raw)
			return
		}
		a.refuse(ctx, raw)
	})
	return a
}

// Status returns the pending approval and past decisions for a query.
func (a *Gate) Status() Status {
	s := Status{Decisions: append([]Outcome{}, a.decisions...)}
	if a.pending != nil {
		p := *a.pending
		s.Pending = &p
	}
	return s
}

// Pending reports whether a decision is being waited for.
func (a *Gate) Pending() bool { return a.pending != nil }

// Request asks support staff to decide req and waits until an active staff
// member approves or rejects it, the window ends (Expired) or
// req.Interrupt fires (Interrupted). While waiting the workflow has
// AwaitingApproval=true and its current details say what is to be decided.
// Malformed, stale and duplicate signals and unknown or inactive approvers
// are rejected, recorded in the SignalLog, and the wait goes on. The error
// is non-nil only when the workflow itself is cancelled or a search
// attribute cannot be set.
func (a *Gate) Request(ctx workflow.Context, req Request) (Outcome, error) {
	if a.pending != nil {
		return Outcome{}, errors.New("approval: a request is already pending")
	}
	window := req.Window
	if window <= 0 {
		window = a.cfg.Window
	}
	a.seq++
	now := workflow.Now(ctx).UTC()
	id := a.approvalID(ctx)
	a.pending = &Pending{
		ApprovalID: id, Flow: a.cfg.Flow, Subject: req.Subject, Question: req.Question,
		Facts: append([]string{}, req.Facts...), AllowedRoles: append([]string{}, req.AllowedRoles...),
		RequestedAt: now, ExpiresAt: now.Add(window),
		Example: examplePayload(id, support.DecisionApprove), ExampleReject: examplePayload(id, support.DecisionReject),
	}
	if err := workflows.UpsertAwaitingApproval(ctx, true); err != nil {
		return Outcome{}, err
	}
	workflow.SetCurrentDetails(ctx, a.details())
	outcome, err := a.wait(ctx, req)
	// Whatever ended the wait, signals still queued are answered now: they
	// are duplicates of the decision or came too late.
	a.pending = nil
	for _, raw := range a.inbox {
		a.refuse(ctx, raw)
	}
	a.inbox = nil
	workflow.SetCurrentDetails(ctx, "")
	if err != nil {
		return outcome, err
	}
	a.decisions = append(a.decisions, outcome)
	return outcome, workflows.UpsertAwaitingApproval(ctx, false)
}

// wait processes approval signals in arrival order until one decides, the
// window's one timer fires or the owner interrupts. Each request has one
// "approval window" timer, cancelled when the wait ends
// (docs/approvals.md#the-window).
func (a *Gate) wait(ctx workflow.Context, req Request) (Outcome, error) {
	p := a.pending
	ended := func(decision string) Outcome {
		return Outcome{ApprovalID: p.ApprovalID, Subject: p.Subject, Decision: decision, At: workflow.Now(ctx).UTC()}
	}
	interrupted := func() bool { return req.Interrupt != nil && req.Interrupt() }
	left := p.ExpiresAt.Sub(workflow.Now(ctx))
	if left <= 0 {
		return ended(Expired), nil
	}
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	// Cancelling a timer that already fired does nothing; otherwise the
	// history shows the window closed when the decision came.
	defer cancelTimer()
	timer := workflow.NewTimerWithOptions(timerCtx, left, workflow.TimerOptions{Summary: "approval window " + p.ApprovalID})
	for {
		for len(a.inbox) > 0 {
			raw := a.inbox[0]
			a.inbox = a.inbox[1:]
			if out, done := a.consider(ctx, raw, req); done {
				a.answer(raw, out)
				return out, nil
			}
		}
		if interrupted() {
			return ended(Interrupted), nil
		}
		if timer.IsReady() {
			return ended(Expired), nil
		}
		if err := workflow.Await(ctx, func() bool { return len(a.inbox) > 0 || interrupted() || timer.IsReady() }); err != nil {
			return ended(Interrupted), err
		}
	}
}

// consider checks one signal against the pending request; a well-formed one
// from a staff member decides it (done). Anything else is recorded.
func (a *Gate) consider(ctx workflow.Context, raw converter.RawValue, req Request) (Outcome, bool) {
	p := a.pending
	sig, ok := a.parse(ctx, raw, p.ApprovalID)
	if !ok {
		return Outcome{}, false
	}
	record, env, err := flow.CallTool[support.ApprovalRecord](ctx, a.cfg.Specs, flow.Call{
		Tool: support.RecordApprovalTool,
		Req:  a.request(ctx, sig),
		Args: support.RecordApprovalArgs{
			Flow: a.cfg.Flow, Subject: p.Subject, ApprovalID: sig.ApprovalID, Decision: sig.Decision,
			Approver: sig.Approver, Reason: sig.Reason, AllowedRoles: req.AllowedRoles, Seal: sig.Seal,
		},
		// "verify": the call checks a claimed decision; a refused one is a
		// failed activity, never retried, and the wait goes on
		// (docs/approvals.md#what-staff-see).
		Summary:     fmt.Sprintf("%s: verify %s by %s (%s)", support.RecordApprovalTool, sig.Decision, sig.Approver, sig.ApprovalID),
		FailRefusal: true,
	}).Get(ctx)
	if err != nil {
		reason := workflows.RejectVerifyFailed
		switch toolkit.CodeOf(err) {
		case toolkit.Unauthorized:
			reason = workflows.RejectUnauthenticated
		case toolkit.NotFound:
			reason = workflows.RejectUnknownApprover
		case toolkit.Forbidden:
			reason = workflows.RejectApproverForbidden
		case toolkit.InvalidArgument:
			reason = workflows.RejectMalformed
		}
		te := toolkit.AsError(err)
		a.refuseRaw(ctx, raw, workflows.RejectedSignal{Signal: SignalApproval, Reason: reason, Detail: te.Message,
			ApprovalID: sig.ApprovalID, Approver: sig.Approver, Instead: a.instead(reason, te.RecoverySuggestion)})
		return Outcome{}, false
	}
	a.decided[sig.ApprovalID] = true
	ref := workflows.EvidenceRefOf("approval/"+sig.ApprovalID, env)
	out := Outcome{
		ApprovalID: sig.ApprovalID, Subject: p.Subject, Decision: record.Decision,
		Approver: record.Approver, ApproverRole: record.ApproverRole, Reason: record.Reason,
		At: workflow.Now(ctx).UTC(), Evidence: &ref,
	}
	if record.Seal != nil {
		out.SealID = record.Seal.SealID
	}
	return out, true
}

// parse decodes and checks a signal against the current approval id
// (empty when none is pending); a failure is recorded and ok is false.
func (a *Gate) parse(ctx workflow.Context, raw converter.RawValue, current string) (Signal, bool) {
	var sig Signal
	reject := func(reason, detail string) (Signal, bool) {
		a.refuseRaw(ctx, raw, workflows.RejectedSignal{Signal: SignalApproval, Reason: reason, Detail: detail,
			ApprovalID: safeToken(sig.ApprovalID), Approver: safeToken(sig.Approver), Instead: a.instead(reason, "")})
		return sig, false
	}
	if err := workflows.DecodeSignal(raw, &sig); err != nil {
		return reject(workflows.RejectMalformed, err.Error())
	}
	if problem := sig.problem(); problem != "" {
		if sig.unsealedOnly() {
			return reject(workflows.RejectUnauthenticated, unsealedDetail)
		}
		return reject(workflows.RejectMalformed, problem)
	}
	switch {
	case a.decided[sig.ApprovalID]:
		return reject(workflows.RejectDuplicateApproval, "approval "+sig.ApprovalID+" was already decided")
	case current == "":
		return reject(workflows.RejectNotWaiting, "no approval is pending")
	case sig.ApprovalID != current:
		return reject(workflows.RejectStaleApproval, "approval "+sig.ApprovalID+" is not the pending one ("+current+")")
	}
	return sig, true
}

// refuse answers a signal that arrived while nothing is pending, or was
// still queued when the wait ended: it is recorded as malformed, a
// duplicate of a decision, or not waited for.
func (a *Gate) refuse(ctx workflow.Context, raw converter.RawValue) {
	_, _ = a.parse(ctx, raw, "") // with nothing pending parse always refuses
}

// unsealedDetail is the refusal of a decision that names no approver and
// carries no seal: staff sent it past the codec server.
const unsealedDetail = "the decision is not sealed by the codec server, so its author is unknown"

// unsealedOnly reports a decision whose only fault is the missing author:
// no approver and no seal, the rest well-formed. It is refused as
// unauthenticated, not malformed, since signing in is the fix. (An
// unsealed decision that types an approver goes to support.record_approval,
// which refuses it the same way.)
func (s Signal) unsealedOnly() bool {
	t := s
	t.Approver = "unsealed"
	return s.Seal == nil && s.Approver == "" && t.problem() == ""
}

// problem names what is wrong with a decoded signal, or "".
func (s Signal) problem() string {
	var bad []string
	if !IDPattern.MatchString(s.ApprovalID) {
		bad = append(bad, "approval_id must be apr_ and 16 hex digits")
	}
	if s.Decision != support.DecisionApprove && s.Decision != support.DecisionReject {
		bad = append(bad, `decision must be "approve" or "reject"`)
	}
	if !approverPattern.MatchString(s.Approver) {
		bad = append(bad, "approver must be the staff id the codec server sealed")
	}
	if len(s.Reason) > 500 {
		bad = append(bad, "reason must be at most 500 characters")
	}
	if s.Decision == support.DecisionReject && strings.TrimSpace(s.Reason) == "" {
		bad = append(bad, "a rejection needs a reason")
	}
	return strings.Join(bad, "; ")
}

// safeToken keeps an identifier from a rejected signal only if it looks like
// one, so free text (possibly PII) never lands in the status query.
func safeToken(s string) string {
	if len(s) <= 64 && approverPattern.MatchString(s) || IDPattern.MatchString(s) {
		return s
	}
	return ""
}

// request is the envelope of a record call: the approver is the actor, since
// the decision is theirs (docs/envelope.md#actors).
func (a *Gate) request(ctx workflow.Context, sig Signal) toolkit.Request {
	a.attempts++
	step := fmt.Sprintf("approval/%s/%d", sig.ApprovalID, a.attempts)
	req := flow.Envelope(ctx, a.cfg.Request, step)
	req.Actor = toolkit.Actor{Type: toolkit.ActorUser, ID: sig.Approver}
	// support.record_approval is a write (it records a decision,
	// docs/approvals.md#recording-a-decision): the invoker wants a key, one per
	// attempt.
	req.IdempotencyKey = fmt.Sprintf("approval:%s:%d", sig.ApprovalID, a.attempts)
	return req
}

// approvalID is "apr_" and 16 hex digits derived from the run, the flow and
// the request's sequence number: deterministic on replay, distinct across
// runs, so a decision meant for another run or request is recognised as stale.
func (a *Gate) approvalID(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	return "apr_" + flow.ShortHash(fmt.Sprintf("%s/%s/%s/%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, a.cfg.Flow, a.seq))
}
