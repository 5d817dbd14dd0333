package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

const (
	onbMerchant = "m_acme_goods"
	onbAccount  = "acct_1CwAcmeGoods0001"
)

// onbFixture runs Onboarding on the test environment with the five tools
// faked: the account's state is whatever the test set last, so a delayed
// callback can "complete" the merchant's onboarding between reads.
type onbFixture struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	in  OnboardingInput

	mu        sync.Mutex
	account   stripetools.AccountStatus
	noAccount bool
	found     bool
	// ungrounded lists requirement keys whose citation is too weak.
	ungrounded map[string]bool
	failures   map[string]*toolkit.Error
	// failTimes limits a failure to the next n calls (0: always).
	failTimes map[string]int
	calls     map[string][]any
	snapN     int
	upserts   []string
}

func newOnbFixture(t *testing.T) *onbFixture {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartTime(t0)
	f := &onbFixture{
		t: t, env: env, found: true, ungrounded: map[string]bool{},
		failures: map[string]*toolkit.Error{}, failTimes: map[string]int{}, calls: map[string][]any{},
	}
	f.setAccount(false, false, []string{"external_account", "tos_acceptance.date"}, nil, "requirements.past_due")
	f.in = OnboardingInput{MerchantID: onbMerchant, Deadline: 48 * time.Hour}
	id, _ := OnboardingID(onbMerchant)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	env.RegisterWorkflowWithOptions(Onboarding, workflow.RegisterOptions{Name: OnboardingWorkflowName})
	env.RegisterActivity(&activities.Onboarding{})
	env.RegisterActivity(&activities.Approval{})
	env.OnActivity("GetMerchantRow", mock.Anything, mock.Anything).Return(f.getMerchantRow)
	env.OnActivity("GetAccountStatus", mock.Anything, mock.Anything).Return(f.getAccountStatus)
	env.OnActivity("CreateRelinkURL", mock.Anything, mock.Anything).Return(f.createRelinkURL)
	env.OnActivity("CreateLoginLink", mock.Anything, mock.Anything).Return(f.createLoginLink)
	env.OnActivity("Cite", mock.Anything, mock.Anything).Return(f.cite)
	env.OnActivity("RecordApproval", mock.Anything, mock.Anything).Return(f.recordApproval)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		f.mu.Lock()
		defer f.mu.Unlock()
		if v, ok := sa.GetKeyword(SearchState); ok {
			f.upserts = append(f.upserts, "state="+v)
		}
		if v, ok := sa.GetBool(SearchAwaitingApproval); ok {
			f.upserts = append(f.upserts, fmt.Sprintf("awaiting=%v", v))
		}
	}).Return(nil)
	return f
}

func (f *onbFixture) setAccount(charges, payouts bool, currentlyDue, pastDue []string, disabled string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	nn := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	f.account = stripetools.AccountStatus{StripeAccountID: onbAccount, ChargesEnabled: charges, PayoutsEnabled: payouts,
		Requirements: stripetools.Requirements{CurrentlyDue: nn(currentlyDue), PastDue: nn(pastDue), EventuallyDue: []string{},
			PendingVerification: []string{}, DisabledReason: disabled}}
}

// enable makes the account able to trade.
func (f *onbFixture) enable() { f.setAccount(true, true, nil, nil, "") }

func (f *onbFixture) fail(activity string, e *toolkit.Error, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[activity], f.failTimes[activity] = e, times
}

func (f *onbFixture) envelopeFor(tool string, status toolkit.Status) toolkit.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapN++
	return toolkit.Response{OK: true, Status: status, Tool: tool, Version: "1.0.0",
		Evidence: &toolkit.Evidence{SnapshotID: fmt.Sprintf("ev_onb_%02d", f.snapN), Sources: []toolkit.Source{{Type: "tool", Name: tool, Hash: "sha256:test"}}}}
}

func (f *onbFixture) enter(name string, in any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name] = append(f.calls[name], in)
	if e := f.failures[name]; e != nil {
		if n := f.failTimes[name]; n > 0 {
			if n == 1 {
				delete(f.failures, name)
			}
			f.failTimes[name] = n - 1
		}
		return toolkit.ApplicationError(e)
	}
	return nil
}

func (f *onbFixture) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls[name])
}

func (f *onbFixture) callsOf(name string) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]any(nil), f.calls[name]...)
}

func (f *onbFixture) getMerchantRow(_ context.Context, in activities.GetMerchantRowInput) (activities.GetMerchantRowResult, error) {
	if err := f.enter("GetMerchantRow", in); err != nil {
		return activities.GetMerchantRowResult{}, err
	}
	row := merchant.GetRowOutput{Found: f.found, Lookup: "merchant_id", ObservedAt: f.env.Now().Format(time.RFC3339)}
	status := toolkit.StatusEmpty
	if f.found {
		status = toolkit.StatusOK
		row.MerchantID, row.Version = in.Args.MerchantID, 1
		row.StatusSummary = &merchant.StatusSummary{OnboardingStatus: "in_progress", Country: "GB", BusinessType: "company", HasStripeAccount: !f.noAccount}
		if !f.noAccount {
			row.StripeAccountID = onbAccount
		}
	}
	return activities.GetMerchantRowResult{Row: row, Envelope: f.envelopeFor(merchant.ToolGetRow, status)}, nil
}

func (f *onbFixture) getAccountStatus(_ context.Context, in activities.GetAccountStatusInput) (activities.GetAccountStatusResult, error) {
	if err := f.enter("GetAccountStatus", in); err != nil {
		return activities.GetAccountStatusResult{}, err
	}
	f.mu.Lock()
	st := f.account
	f.mu.Unlock()
	st.ObservedAt = f.env.Now().UTC().Format(time.RFC3339)
	return activities.GetAccountStatusResult{Status: st, Envelope: f.envelopeFor(stripetools.ToolAccountStatus, toolkit.StatusOK)}, nil
}

// link answers like the real tool after sanitising: the URL masked.
func (f *onbFixture) link(tool string, n int, lifetime time.Duration) stripetools.Link {
	now := f.env.Now().UTC()
	url := fmt.Sprintf("https://connect.stripe.test/%s/%d", tool, n)
	return stripetools.Link{StripeAccountID: onbAccount, CreatedAt: now.Format(time.RFC3339),
		ExpiresAt: now.Add(lifetime).Format(time.RFC3339), URLSHA256: stripetools.URLHash(url), Secret: "***"}
}

func (f *onbFixture) createRelinkURL(_ context.Context, in activities.CreateRelinkURLInput) (activities.CreateRelinkURLResult, error) {
	if err := f.enter("CreateRelinkURL", in); err != nil {
		return activities.CreateRelinkURLResult{}, err
	}
	l := f.link("relink", f.count("CreateRelinkURL"), 5*time.Minute)
	l.AccountLinkType = "account_onboarding"
	return activities.CreateRelinkURLResult{Link: l, Envelope: f.envelopeFor(stripetools.ToolRelinkURL, toolkit.StatusOK)}, nil
}

func (f *onbFixture) createLoginLink(_ context.Context, in activities.CreateLoginLinkInput) (activities.CreateLoginLinkResult, error) {
	if err := f.enter("CreateLoginLink", in); err != nil {
		return activities.CreateLoginLinkResult{}, err
	}
	l := f.link("login", f.count("CreateLoginLink"), stripetools.LoginLinkLifetime)
	l.ExpiresAtEstimated = true
	return activities.CreateLoginLinkResult{Link: l, Envelope: f.envelopeFor(stripetools.ToolLoginLink, toolkit.StatusOK)}, nil
}

func (f *onbFixture) cite(_ context.Context, in activities.CiteInput) (activities.CiteResult, error) {
	if err := f.enter("Cite", in); err != nil {
		return activities.CiteResult{}, err
	}
	key := in.Args.Claim
	for _, suffix := range []string{" is currently due", " is past due"} {
		if len(key) > len(suffix) && key[len(key)-len(suffix):] == suffix {
			key = key[:len(key)-len(suffix)]
		}
	}
	res := knowledge.CiteResult{Grounded: !f.ungrounded[key], CorpusVersion: "kb-0123456789abcdef",
		Citations: []knowledge.Citation{{Title: "About " + key, URL: "https://docs.stripe.com/connect/required-verification-information",
			Section: key, Confidence: 0.8, Runbook: "knowledge/corpus/x.md"}}}
	status := toolkit.StatusOK
	if !res.Grounded {
		status, res.Citations[0].Confidence = toolkit.StatusEmpty, 0.3
	}
	return activities.CiteResult{Cite: res, Envelope: f.envelopeFor("knowledge.cite", status)}, nil
}

func (f *onbFixture) recordApproval(_ context.Context, in activities.RecordApprovalInput) (activities.RecordApprovalResult, error) {
	if err := f.enter("RecordApproval", in); err != nil {
		return activities.RecordApprovalResult{}, err
	}
	m, ok := staff[in.Args.Approver]
	if !ok || !m.active {
		return activities.RecordApprovalResult{}, toolkit.ApplicationError(toolkit.Errorf(toolkit.NotFound, "approver %s is not on the staff roster", in.Args.Approver))
	}
	a := in.Args
	return activities.RecordApprovalResult{
		Record: support.ApprovalRecord{Flow: a.Flow, Subject: a.Subject, ApprovalID: a.ApprovalID, Decision: a.Decision,
			Approver: a.Approver, ApproverRole: m.role, Reason: a.Reason, StaffVerified: true},
		Envelope: f.envelopeFor(support.RecordApprovalTool, toolkit.StatusOK),
	}, nil
}

// run executes the workflow to its end and returns its result.
func (f *onbFixture) run() OnboardingResult {
	f.t.Helper()
	f.env.ExecuteWorkflow(OnboardingWorkflowName, f.in)
	if !f.env.IsWorkflowCompleted() {
		f.t.Fatal("workflow did not complete")
	}
	if err := f.env.GetWorkflowError(); err != nil {
		f.t.Fatalf("workflow failed: %v", err)
	}
	var res OnboardingResult
	if err := f.env.GetWorkflowResult(&res); err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *onbFixture) status() OnboardingStatus {
	f.t.Helper()
	v, err := f.env.QueryWorkflow(QueryStatus)
	if err != nil {
		f.t.Fatalf("query status: %v", err)
	}
	var s OnboardingStatus
	if err := v.Get(&s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *onbFixture) at(d time.Duration, fn func()) { f.env.RegisterDelayedCallback(fn, d) }

func (f *onbFixture) signal(name string, payload any) { f.env.SignalWorkflow(name, payload) }
