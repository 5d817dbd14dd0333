package onboardingflow

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

func TestOnboardingID(t *testing.T) {
	id, err := ID("m_acme_goods")
	if err != nil || id != "onboarding/m_acme_goods" {
		t.Fatalf("id %q err %v", id, err)
	}
	for _, bad := range []string{"", "acme", "m_Acme", "m_a", "m_jane@example.com", "m_acme/goods"} {
		if _, err := ID(bad); err == nil {
			t.Errorf("ID(%q) accepted", bad)
		}
	}
	k := onboardingKey("onboarding/m_acme_goods", "run-1", "relink-1")
	if k != onboardingKey("onboarding/m_acme_goods", "run-1", "relink-1") || k == onboardingKey("onboarding/m_acme_goods", "run-1", "relink-2") ||
		k == onboardingKey("onboarding/m_acme_goods", "run-2", "relink-1") || workflows.CheckIdempotencyKey(k) != nil {
		t.Fatalf("idempotency key %q", k)
	}
}

// The merchant returns from Stripe after ten minutes; the fresh read finds
// the account enabled and the onboarding ends.
func TestOnboardingReturnedCompletes(t *testing.T) {
	onboardingReturnedCompletes(t, newOnbFixture(t))
}

func onboardingReturnedCompletes(t *testing.T, f *onbFixture) {
	f.At(5*time.Minute, func() {
		s := f.status()
		if s.State != StateAwaitingMerchant || s.Relink == nil || s.Relink.SnapshotID == "" || !strings.HasPrefix(s.Relink.URLSHA256, "sha256:") {
			t.Errorf("while waiting: state %s relink %+v", s.State, s.Relink)
		}
		if len(s.Explanations) != 3 || !s.Explanations[0].Shown || s.Explanations[0].Requirement != "external_account" ||
			len(s.Explanations[0].Citations) == 0 {
			t.Errorf("explanations %+v", s.Explanations)
		}
		if !slices.Equal(s.Due, []string{"external_account", "tos_acceptance.date"}) {
			t.Errorf("due %v", s.Due)
		}
		b, _ := json.Marshal(s)
		if strings.Contains(string(b), "connect.stripe.test") {
			t.Errorf("the status query holds a link: %s", b)
		}
	})
	f.At(10*time.Minute, func() {
		f.enable()
		f.signal(SignalReturned, ReturnedSignal{})
	})
	res := f.run()
	if res.State != StateOnboarded || !res.ChargesEnabled || !res.PayoutsEnabled || res.StatusReads != 2 || len(res.Due) != 0 {
		t.Fatalf("result %+v", res)
	}
	reads := f.CallsOf("GetAccountStatus")
	first, second := reads[0].(flowtest.ToolIn[stripetools.AccountStatusInput]), reads[1].(flowtest.ToolIn[stripetools.AccountStatusInput])
	if first.Args.MaxAgeSeconds != nil || second.Args.MaxAgeSeconds == nil || *second.Args.MaxAgeSeconds != 0 {
		t.Fatal("the read after returned must bypass the status cache")
	}
	relink := f.CallsOf("CreateRelinkURL")[0].(flowtest.ToolIn[stripetools.RelinkInput])
	if relink.Request.IdempotencyKey == "" || workflows.CheckIdempotencyKey(relink.Request.IdempotencyKey) != nil || relink.Request.Actor.Type != toolkit.ActorSystem ||
		relink.Request.UserID != onbMerchant || !strings.HasPrefix(relink.Request.CorrelationID, "corr-") {
		t.Fatalf("relink request %+v", relink.Request)
	}
	if f.Count("Cite") != 3 { // two requirements and the disabled reason
		t.Fatalf("cite calls = %d", f.Count("Cite"))
	}
	if f.Upserts[len(f.Upserts)-1] != "state="+StateOnboarded {
		t.Fatalf("search attribute upserts %v", f.Upserts)
	}
}

// Stripe's webhook drives the loop: a duplicate event and an event for
// another account are refused; the account becomes enabled in two steps.
func TestOnboardingAccountUpdated(t *testing.T) {
	f := newOnbFixture(t)
	f.At(time.Minute, func() {
		f.setAccount(false, false, []string{"tos_acceptance.date"}, nil, "")
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_1", AccountID: onbAccount})
	})
	f.At(2*time.Minute, func() {
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_1", AccountID: onbAccount})
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_2", AccountID: "acct_1SomeoneElse01"})
		f.signal(SignalAccountUpdated, map[string]any{"event_id": "evt_3", "account": onbAccount})
	})
	f.At(3*time.Minute, func() {
		s := f.status()
		if s.StatusReads != 2 || s.Signals.AccountUpdated != 1 || len(s.Explanations) != 1 || s.Explanations[0].Requirement != "tos_acceptance.date" {
			t.Errorf("after the first event: reads %d signals %+v explanations %+v", s.StatusReads, s.Signals, s.Explanations)
		}
		if got := flowtest.RejectedReasons(s.Log); !slices.Equal(got, []string{"account_updated:duplicate_event", "account_updated:wrong_account", "account_updated:malformed"}) {
			t.Errorf("rejected %v", got)
		}
		f.enable()
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_4", AccountID: onbAccount})
	})
	res := f.run()
	if res.State != StateOnboarded || res.StatusReads != 3 {
		t.Fatalf("result %+v", res)
	}
	// The relink URL was not used up by Stripe's events: one link only.
	if f.Count("CreateRelinkURL") != 1 {
		t.Fatalf("relink calls = %d", f.Count("CreateRelinkURL"))
	}
}

// Each dashboard signal makes a new login link with its own idempotency
// key; returned spends the relink URL, so the next one is new.
func TestOnboardingDashboardAndRelinkSteps(t *testing.T) {
	f := newOnbFixture(t)
	f.At(time.Minute, func() { f.signal(SignalDashboard, nil) })
	f.At(2*time.Minute, func() { f.signal(SignalDashboard, DashboardSignal{}) })
	f.At(3*time.Minute, func() { f.signal(SignalReturned, ReturnedSignal{Refresh: true}) })
	f.At(4*time.Minute, func() {
		s := f.status()
		if len(s.Logins) != 2 || s.Logins[0].URLSHA256 == s.Logins[1].URLSHA256 || s.Signals.Dashboard != 2 {
			t.Errorf("logins %+v", s.Logins)
		}
		if s.Relink == nil || s.Relink.Step != "relink-2" || s.Relink.Consumed {
			t.Errorf("relink %+v", s.Relink)
		}
		f.enable()
		f.signal(SignalReturned, nil)
	})
	f.run()
	keys := map[string]bool{}
	for _, c := range f.CallsOf("CreateLoginLink") {
		keys[c.(flowtest.ToolIn[stripetools.LoginLinkInput]).Request.IdempotencyKey] = true
	}
	for _, c := range f.CallsOf("CreateRelinkURL") {
		keys[c.(flowtest.ToolIn[stripetools.RelinkInput]).Request.IdempotencyKey] = true
	}
	if f.Count("CreateLoginLink") != 2 || f.Count("CreateRelinkURL") != 2 || len(keys) != 4 {
		t.Fatalf("login %d relink %d distinct keys %d", f.Count("CreateLoginLink"), f.Count("CreateRelinkURL"), len(keys))
	}
}

// An ungrounded explanation is hidden until support staff approve it; the
// merchant's flow does not wait for them.
func TestOnboardingUngroundedExplanationNeedsApproval(t *testing.T) {
	f := newOnbFixture(t)
	f.ungrounded["tos_acceptance.date"] = true
	f.At(time.Minute, func() {
		s := f.status()
		if s.Approval.Pending == nil || s.Approval.Pending.Flow != workflows.FlowOnboarding || !slices.Equal(s.Approval.Pending.AllowedRoles, []string{support.RoleSupport, support.RoleAdmin}) {
			t.Errorf("pending approval %+v", s.Approval.Pending)
			return
		}
		e := s.Explanations[1]
		if e.Requirement != "tos_acceptance.date" || e.Shown || e.Review != ReviewPending || e.Recovery != onboarding.UngroundedRecovery {
			t.Errorf("ungrounded explanation %+v", e)
		}
		if s.State != StateAwaitingMerchant || s.Relink == nil {
			t.Errorf("the merchant's flow must go on: state %s", s.State)
		}
		f.signal(approval.SignalApproval, flowtest.SealedAs("alice.support", s.Approval.Pending.ApprovalID, "approve", ""))
	})
	f.At(2*time.Minute, func() {
		s := f.status()
		e := s.Explanations[1]
		if e.Review != ReviewApproved || !e.Shown || len(s.Decisions) != 1 || s.Decisions[0].Approver != "alice.support" {
			t.Errorf("after approval: %+v decisions %+v", e, s.Decisions)
		}
		f.enable()
		f.signal(SignalReturned, nil)
	})
	f.run()
	if !slices.Contains(f.Upserts, "awaiting=true") || !slices.Contains(f.Upserts, "awaiting=false") {
		t.Fatalf("AwaitingApproval upserts %v", f.Upserts)
	}
}

// The onboarding ends when the account is enabled even while staff have not
// decided; the review is closed (AwaitingApproval back to false).
func TestOnboardingEndsDuringReview(t *testing.T) {
	f := newOnbFixture(t)
	f.ungrounded["external_account"] = true
	f.At(time.Minute, func() {
		f.enable()
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_9", AccountID: onbAccount})
	})
	res := f.run()
	if res.State != StateOnboarded || len(res.Explanations) == 0 || res.Explanations[0].Review != ReviewDropped || res.Explanations[0].Shown {
		t.Fatalf("result %+v", res)
	}
	if f.Upserts[len(f.Upserts)-1] != "state="+StateOnboarded || !slices.Contains(f.Upserts, "awaiting=false") {
		t.Fatalf("upserts %v", f.Upserts)
	}
}

func TestOnboardingDeadline(t *testing.T) {
	f := newOnbFixture(t)
	f.in.Deadline = 6 * time.Hour
	res := f.run()
	if res.State != StateDeadlineExceeded || res.StatusReads != 1 || len(res.Due) != 2 {
		t.Fatalf("result %+v", res)
	}
	if f.Env.Now().Sub(flowtest.T0) < 6*time.Hour {
		t.Fatalf("ended at %s, before the deadline", f.Env.Now().Sub(flowtest.T0))
	}
}

func TestOnboardingMerchantProblems(t *testing.T) {
	f := newOnbFixture(t)
	f.found = false
	if res := f.run(); res.State != StateMerchantNotFound || f.Count("GetAccountStatus") != 0 {
		t.Fatalf("unknown merchant: %+v", res)
	}
	f = newOnbFixture(t)
	f.noAccount = true
	if res := f.run(); res.State != StateNoStripeAccount || f.Count("GetAccountStatus") != 0 {
		t.Fatalf("merchant without account: %+v", res)
	}
	f = newOnbFixture(t)
	f.Fail("GetAccountStatus", toolkit.FromUpstream("not_found", "no such account"), 0)
	if res := f.run(); res.State != StateFailed || res.LastError == nil || res.LastError.Code != toolkit.NotFound {
		t.Fatalf("account unknown to Stripe: %+v", res)
	}
}

// A read that fails through all its retries is tried again after
// StatusRetryDelay, without a signal.
func TestOnboardingStatusReadRetriedLater(t *testing.T) {
	f := newOnbFixture(t)
	f.in.StatusRetryDelay = 10 * time.Minute
	f.Fail("GetAccountStatus", toolkit.FromUpstream("rate_limited", "slow down"), 3) // one activity's three attempts
	f.enable()
	res := f.run()
	if res.State != StateOnboarded || res.StatusReads != 1 || f.Count("GetAccountStatus") != 4 {
		t.Fatalf("result %+v, calls %d", res, f.Count("GetAccountStatus"))
	}
	if el := f.Env.Now().Sub(flowtest.T0); el < 10*time.Minute {
		t.Fatalf("read again after %s, want the 10 min retry delay", el)
	}
}

func TestOnboardingInputIsChecked(t *testing.T) {
	f := newOnbFixture(t)
	f.in.MerchantID = "m_other_one"
	f.Env.ExecuteWorkflow(WorkflowName, f.in)
	err := f.Env.GetWorkflowError()
	if toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
}

// With a tiny history budget the run continues as new; the state (and the
// signals of the task that decided it) is carried over, and the next run
// picks up where the last one stopped.
func TestOnboardingContinuesAsNewWithState(t *testing.T) {
	f := newOnbFixture(t)
	f.in.ContinueAsNewAfter = 30
	f.At(time.Minute, func() {
		f.Env.SetCurrentHistoryLength(40)
		f.signal(SignalDashboard, nil)
		f.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_a", AccountID: onbAccount})
	})
	f.Env.ExecuteWorkflow(WorkflowName, f.in)
	var can *workflow.ContinueAsNewError
	if err := f.Env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("err = %v, want continue-as-new", err)
	}
	var next Input
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	st := next.State
	if st == nil || st.Runs != 1 || st.StripeAccountID != onbAccount || st.ChainID == "" || st.Relink == nil || len(st.Explanations) != 3 ||
		st.Signals.Dashboard != 1 || st.Signals.AccountUpdated != 1 || len(st.Logins) != 1 || !slices.Contains(st.SeenEvents, "evt_a") {
		t.Fatalf("carried state %+v", st)
	}
	if next.MerchantID != onbMerchant || next.ContinueAsNewAfter != 30 || next.Deadline != 48*time.Hour {
		t.Fatalf("carried input %+v", next)
	}

	g := newOnbFixture(t)
	g.in = next
	g.At(time.Minute, func() {
		// A repeat of an event handled by the previous run is still a duplicate.
		g.signal(SignalAccountUpdated, AccountUpdatedSignal{EventID: "evt_a", AccountID: onbAccount})
		g.enable()
		g.signal(SignalReturned, nil)
	})
	res := g.run()
	// A signal drained into the carried state (NeedRead) costs the next
	// run one read, then returned costs one more.
	wantReads := st.StatusReads + 1
	if st.NeedRead {
		wantReads++
	}
	t.Logf("carried: reads %d need_read %v", st.StatusReads, st.NeedRead)
	if res.State != StateOnboarded || res.Runs != 2 || g.Count("GetMerchantRow") != 0 || res.StatusReads != wantReads {
		t.Fatalf("second run: %+v merchant reads %d", res, g.Count("GetMerchantRow"))
	}
	relinks := g.CallsOf("CreateRelinkURL")
	if len(relinks) != 0 {
		t.Fatalf("the carried relink URL was still valid, yet %d were made", len(relinks))
	}
}
