package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// startOnboardingWorker starts one more worker, wired as the worker binary
// is, against a fake Stripe whose accounts the test sets, and returns its
// task queue.
func (s *realStack) startOnboardingWorker(t *testing.T) (string, *stripefake.Server) {
	t.Helper()
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	tq, _ := s.ws.AddWorker(t, wiringtest.Options{Logger: s.logger, Configure: func(c *config.Config) {
		c.StripeSecretKey, c.StripeAPIBase = "sk_test_51AuditCaptureKey000000000", fake.URL
		c.OnboardingReturnURL = "https://shop.example/onboarding/return"
		c.OnboardingRefreshURL = "https://shop.example/onboarding/refresh"
	}})
	return tq, fake
}

// runOnboarding drives one onboarding: requirements are due (one of them
// has no grounded explanation, so support staff review it), staff approve,
// Stripe enables the account, the merchant comes back, the run completes.
func (s *realStack) runOnboarding(t *testing.T, tq string, fake *stripefake.Server) (string, string, onboardingflow.Result) {
	t.Helper()
	suffix := uniqueKey("x")[2:]
	merchantID, account := "m_capture_"+suffix, "acct_1CwCapture"+suffix
	testenv.AdminExec(t, s.pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
		VALUES ($1, $2, 'Capture Test Shop', 'GB', 'company', 'in_progress')`, merchantID, account)
	return s.runOnboardingOf(t, tq, fake, merchantID, account)
}

// runOnboardingOf is runOnboarding for a merchant row the caller made,
// owning Stripe account account.
func (s *realStack) runOnboardingOf(t *testing.T, tq string, fake *stripefake.Server, merchantID, account string) (string, string, onboardingflow.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	suffix := uniqueKey("x")[2:]
	fake.SetAccount(account, stripefake.Account{
		CurrentlyDue:   []string{"external_account", "tos_acceptance.date", "individual.political_exposure"},
		DisabledReason: "requirements.past_due",
	})
	id, err := onboardingflow.ID(merchantID)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: tq, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes: workflows.StartSearchAttributes(workflows.FlowOnboarding, onboardingflow.StateReadingMerchant),
	}, onboardingflow.WorkflowName, onboardingflow.Input{
		MerchantID: merchantID, Deadline: time.Hour, StatusRetryDelay: 2 * time.Second,
		Request: toolkit.Request{RequestID: "req-" + suffix, UserID: "u_capture", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_capture"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	status := func() (onboardingflow.Status, bool) {
		var st onboardingflow.Status
		v, err := s.c.QueryWorkflow(ctx, id, run.GetRunID(), workflows.QueryStatus)
		return st, err == nil && v.Get(&st) == nil
	}
	waitFor := func(what string, ok func(onboardingflow.Status) bool) onboardingflow.Status {
		for ctx.Err() == nil {
			if st, got := status(); got && ok(st) {
				return st
			}
			time.Sleep(150 * time.Millisecond)
		}
		t.Fatalf("onboarding %s: timed out waiting for %s", id, what)
		return onboardingflow.Status{}
	}
	st := waitFor("the staff review", func(st onboardingflow.Status) bool { return st.Approval.Pending != nil })
	if err := s.c.SignalWorkflow(ctx, id, run.GetRunID(), approval.SignalApproval, approval.SignalOf(sealtest.Seal(t, "alice.support",
		support.Decision{ApprovalID: st.Approval.Pending.ApprovalID, Decision: "approve"}))); err != nil {
		t.Fatal(err)
	}
	waitFor("the decision", func(st onboardingflow.Status) bool {
		return st.Approval.Pending == nil && len(st.Decisions) == 1
	})
	fake.SetAccount(account, stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	if err := s.c.SignalWorkflow(ctx, id, run.GetRunID(), onboardingflow.SignalReturned, onboardingflow.ReturnedSignal{}); err != nil {
		t.Fatal(err)
	}
	var res onboardingflow.Result
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("onboarding %s: %v", id, err)
	}
	return id, run.GetRunID(), res
}

func TestOnboardingAuditsClean(t *testing.T) {
	s := newRealStack(t)
	tq, fake := s.startOnboardingWorker(t)
	id, runID, res := s.runOnboarding(t, tq, fake)
	if res.State != onboardingflow.StateOnboarded {
		t.Fatalf("onboarding ended %+v", res)
	}
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, runID))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitClean || len(rep.Activities) < 5 {
		t.Fatalf("onboarding audit: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
}
