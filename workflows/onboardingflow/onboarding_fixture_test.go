package onboardingflow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

const (
	onbMerchant = "m_acme_goods"
	onbAccount  = "acct_1CwAcmeGoods0001"
)

// onbFixture runs Onboarding on the test environment with the five tools
// faked: the account's state is whatever the test set last, so a delayed
// callback can "complete" the merchant's onboarding between reads.
type onbFixture struct {
	flowtest.FakeEnv
	in Input

	account   stripetools.AccountStatus
	noAccount bool
	found     bool
	// ungrounded lists requirement keys whose citation is too weak.
	ungrounded map[string]bool
}

func newOnbFixture(t *testing.T) *onbFixture {
	f := &onbFixture{found: true, ungrounded: map[string]bool{}}
	id, _ := ID(onbMerchant)
	f.Init(t, id, "ev_onb_")
	f.setAccount(false, false, []string{"external_account", "tos_acceptance.date"}, nil, "requirements.past_due")
	f.in = Input{MerchantID: onbMerchant, Deadline: 48 * time.Hour}
	f.Env.RegisterWorkflowWithOptions(Flow{Specs: flow.NewToolSpecs(flowtest.TestSpecs())}.Run, workflow.RegisterOptions{Name: WorkflowName})
	f.FakeTools(map[string]any{
		merchant.ToolGetRow: f.getMerchantRow, stripetools.ToolAccountStatus: f.getAccountStatus,
		stripetools.ToolRelinkURL: f.createRelinkURL, stripetools.ToolLoginLink: f.createLoginLink,
		onboarding.ToolCite: f.cite,
	})
	return f
}

func (f *onbFixture) setAccount(charges, payouts bool, currentlyDue, pastDue []string, disabled string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
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

func (f *onbFixture) getMerchantRow(_ context.Context, in flowtest.ToolIn[merchant.GetRowInput]) (flowtest.ToolOut[merchant.GetRowOutput], error) {
	if err := f.Enter("GetMerchantRow", in); err != nil {
		return flowtest.ToolOut[merchant.GetRowOutput]{}, err
	}
	row := merchant.GetRowOutput{Found: f.found, Lookup: "merchant_id", ObservedAt: f.Env.Now().Format(time.RFC3339)}
	status := toolkit.StatusEmpty
	if f.found {
		status = toolkit.StatusOK
		row.MerchantID, row.Version = in.Args.MerchantID, 1
		row.StatusSummary = &merchant.StatusSummary{OnboardingStatus: "in_progress", Country: "GB", BusinessType: "company", HasStripeAccount: !f.noAccount}
		if !f.noAccount {
			row.StripeAccountID = onbAccount
		}
	}
	return flowtest.ToolOut[merchant.GetRowOutput]{Data: row, Envelope: f.EnvelopeFor(merchant.ToolGetRow, status)}, nil
}

func (f *onbFixture) getAccountStatus(_ context.Context, in flowtest.ToolIn[stripetools.AccountStatusInput]) (flowtest.ToolOut[stripetools.AccountStatus], error) {
	if err := f.Enter("GetAccountStatus", in); err != nil {
		return flowtest.ToolOut[stripetools.AccountStatus]{}, err
	}
	f.Mu.Lock()
	st := f.account
	f.Mu.Unlock()
	st.ObservedAt = f.Env.Now().UTC().Format(time.RFC3339)
	return flowtest.ToolOut[stripetools.AccountStatus]{Data: st, Envelope: f.EnvelopeFor(stripetools.ToolAccountStatus, toolkit.StatusOK)}, nil
}

// link answers like the real tool after sanitising: the URL masked.
func (f *onbFixture) link(tool string, n int, lifetime time.Duration) stripetools.Link {
	now := f.Env.Now().UTC()
	url := fmt.Sprintf("https://connect.stripe.test/%s/%d", tool, n)
	return stripetools.Link{StripeAccountID: onbAccount, CreatedAt: now.Format(time.RFC3339),
		ExpiresAt: now.Add(lifetime).Format(time.RFC3339), URLSHA256: stripetools.URLHash(url), Secret: "***"}
}

func (f *onbFixture) createRelinkURL(_ context.Context, in flowtest.ToolIn[stripetools.RelinkInput]) (flowtest.ToolOut[stripetools.Link], error) {
	if err := f.Enter("CreateRelinkURL", in); err != nil {
		return flowtest.ToolOut[stripetools.Link]{}, err
	}
	l := f.link("relink", f.Count("CreateRelinkURL"), 5*time.Minute)
	l.AccountLinkType = "account_onboarding"
	return flowtest.ToolOut[stripetools.Link]{Data: l, Envelope: f.EnvelopeFor(stripetools.ToolRelinkURL, toolkit.StatusOK)}, nil
}

func (f *onbFixture) createLoginLink(_ context.Context, in flowtest.ToolIn[stripetools.LoginLinkInput]) (flowtest.ToolOut[stripetools.Link], error) {
	if err := f.Enter("CreateLoginLink", in); err != nil {
		return flowtest.ToolOut[stripetools.Link]{}, err
	}
	l := f.link("login", f.Count("CreateLoginLink"), stripetools.LoginLinkLifetime)
	l.ExpiresAtEstimated = true
	return flowtest.ToolOut[stripetools.Link]{Data: l, Envelope: f.EnvelopeFor(stripetools.ToolLoginLink, toolkit.StatusOK)}, nil
}

func (f *onbFixture) cite(_ context.Context, in flowtest.ToolIn[onboarding.CiteInput]) (flowtest.ToolOut[knowledge.CiteResult], error) {
	if err := f.Enter("Cite", in); err != nil {
		return flowtest.ToolOut[knowledge.CiteResult]{}, err
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
	return flowtest.ToolOut[knowledge.CiteResult]{Data: res, Envelope: f.EnvelopeFor("knowledge.cite", status)}, nil
}

// run executes the workflow to its end and returns its result.
func (f *onbFixture) run() Result {
	f.T.Helper()
	return flowtest.RunWorkflow[Result](&f.FakeEnv, WorkflowName, f.in)
}

func (f *onbFixture) status() Status {
	f.T.Helper()
	return flowtest.FetchStatus[Status](&f.FakeEnv)
}

func (f *onbFixture) signal(name string, payload any) { f.Env.SignalWorkflow(name, payload) }
