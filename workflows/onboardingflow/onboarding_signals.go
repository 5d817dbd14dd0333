package onboardingflow

import (
	"regexp"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/workflows"
)

// Reasons an onboarding signal is rejected, besides RejectMalformed.
const (
	// RejectWrongAccount: account_updated named another connected account.
	RejectWrongAccount = "wrong_account"
	// RejectDuplicateEvent: account_updated repeated an event id already
	// handled (Stripe delivers at least once).
	RejectDuplicateEvent = "duplicate_event"
	// RejectTooManyRequests: more dashboard signals queued than served.
	RejectTooManyRequests = "too_many_requests"
)

var (
	eventIDPattern   = regexp.MustCompile(`^evt_[A-Za-z0-9_]{1,255}$`)
	accountIDPattern = regexp.MustCompile(`^acct_[A-Za-z0-9]{1,64}$`)
)

// ReturnedSignal is the payload of the returned signal (optional).
type ReturnedSignal struct {
	// Refresh is true when the merchant landed on refresh_url: the link
	// expired or was already used.
	Refresh bool `json:"refresh,omitempty"`
}

// AccountUpdatedSignal is the payload of account_updated.
type AccountUpdatedSignal struct {
	EventID   string `json:"event_id"`
	AccountID string `json:"account_id"`
}

// DashboardSignal is the payload of the dashboard signal (optional).
type DashboardSignal struct{}

// addSignals lets sel wake on any onboarding signal.
func (o *onboardingRun) addSignals(ctx workflow.Context, sel workflow.Selector) {
	for _, ch := range []struct {
		c      workflow.ReceiveChannel
		handle func(workflow.Context, converter.RawValue)
	}{{o.returned, o.onReturned}, {o.updated, o.onAccountUpdated}, {o.dashboard, o.onDashboard}} {
		sel.AddReceive(ch.c, func(c workflow.ReceiveChannel, _ bool) { ch.handle(ctx, workflows.ReceiveRaw(ctx, c)) })
	}
}

// drain handles every signal already queued, without blocking.
func (o *onboardingRun) drain(ctx workflow.Context) {
	for {
		took := false
		for _, ch := range []struct {
			c      workflow.ReceiveChannel
			handle func(workflow.Context, converter.RawValue)
		}{{o.returned, o.onReturned}, {o.updated, o.onAccountUpdated}, {o.dashboard, o.onDashboard}} {
			var raw converter.RawValue
			if ch.c.ReceiveAsync(&raw) {
				ch.handle(ctx, raw)
				took = true
			}
		}
		if !took {
			return
		}
	}
}

// onReturned: the merchant is back, so the link is spent and the account
// must be read fresh.
func (o *onboardingRun) onReturned(ctx workflow.Context, raw converter.RawValue) {
	var sig ReturnedSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil && err != workflows.ErrEmptySignal {
		o.st.Log.Reject(ctx, workflows.RejectedSignal{Signal: SignalReturned, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
	o.st.Signals.Returned++
	if o.st.Relink != nil {
		o.st.Relink.Consumed = true
	}
	o.wantFreshRead()
}

// onAccountUpdated: Stripe says the account changed; read it fresh. The
// relink URL stays valid: the merchant may still be on Stripe's page.
func (o *onboardingRun) onAccountUpdated(ctx workflow.Context, raw converter.RawValue) {
	var sig AccountUpdatedSignal
	reject := func(reason, detail string) {
		o.st.Log.Reject(ctx, workflows.RejectedSignal{Signal: SignalAccountUpdated, Reason: reason, Detail: detail})
	}
	if err := workflows.DecodeSignal(raw, &sig); err != nil {
		reject(workflows.RejectMalformed, err.Error())
		return
	}
	switch {
	case !eventIDPattern.MatchString(sig.EventID) || !accountIDPattern.MatchString(sig.AccountID):
		reject(workflows.RejectMalformed, "event_id must be evt_… and account_id acct_…")
		return
	case o.st.StripeAccountID != "" && sig.AccountID != o.st.StripeAccountID:
		reject(RejectWrongAccount, "event "+sig.EventID+" is for another account")
		return
	}
	for _, id := range o.st.SeenEvents {
		if id == sig.EventID {
			reject(RejectDuplicateEvent, "event "+sig.EventID+" was already handled")
			return
		}
	}
	o.st.SeenEvents = append(o.st.SeenEvents, sig.EventID)
	if len(o.st.SeenEvents) > maxSeenEvents {
		o.st.SeenEvents = o.st.SeenEvents[len(o.st.SeenEvents)-maxSeenEvents:]
	}
	o.st.Signals.AccountUpdated++
	o.wantFreshRead()
}

// onDashboard queues one login link.
func (o *onboardingRun) onDashboard(ctx workflow.Context, raw converter.RawValue) {
	var sig DashboardSignal
	if err := workflows.DecodeSignal(raw, &sig); err != nil && err != workflows.ErrEmptySignal {
		o.st.Log.Reject(ctx, workflows.RejectedSignal{Signal: SignalDashboard, Reason: workflows.RejectMalformed, Detail: err.Error()})
		return
	}
	if o.st.PendingDashboard >= maxPendingDashboard {
		o.st.Log.Reject(ctx, workflows.RejectedSignal{Signal: SignalDashboard, Reason: RejectTooManyRequests,
			Detail: "login links are still being made for earlier requests"})
		return
	}
	o.st.Signals.Dashboard++
	o.st.PendingDashboard++
}

func (o *onboardingRun) wantFreshRead() {
	// A signal means something changed: read now, not at the retry time.
	o.st.NeedRead, o.st.ReadFresh, o.st.RetryReadAt = true, true, time.Time{}
}
