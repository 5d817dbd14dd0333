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

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// t0 is the test clock's start, so quote expiries are exact.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// fixture is a DraftOrder run on the test environment with every activity
// mocked by a small fake of the commerce and support tools. Tests change
// the fake's answers (unit prices, verdict, failures) before Run.
type fixture struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	in  DraftOrderInput

	mu sync.Mutex
	// unitPrice is the price pricing answers with (per SKU, minor units);
	// priceAfter switches it for calls made at or after that time.
	unitPrice  int64
	newPrice   int64
	priceAfter time.Time
	verdict    commerce.ComplianceVerdict
	// failures per activity name, returned instead of an answer.
	failures map[string]*toolkit.Error
	calls    map[string][]any
	snapN    int
	upserts  []string
}

func newFixture(t *testing.T) *fixture {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartTime(t0)
	f := &fixture{
		t: t, env: env, unitPrice: 2500, newPrice: 2500,
		verdict:  commerce.ComplianceVerdict{Verdict: commerce.VerdictAllow, Confidence: 0.97, Reasons: []commerce.ComplianceReason{}, RulesetVersion: "compliance-test"},
		failures: map[string]*toolkit.Error{}, calls: map[string][]any{},
	}
	f.in = DraftOrderInput{
		Request: toolkit.Request{
			RequestID: "req-test", UserID: "u_123", IdempotencyKey: "key-0001-abcd",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_123"}, Currency: "EUR",
		},
		Items:  []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 2}},
		ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"},
	}
	id, _ := DraftOrderID("u_123", "key-0001-abcd")
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	env.RegisterWorkflow(DraftOrder)
	env.RegisterActivity(&activities.Commerce{})
	env.RegisterActivity(&activities.Approval{})
	env.OnActivity("GetQuote", mock.Anything, mock.Anything).Return(f.getQuote)
	env.OnActivity("QuoteShipping", mock.Anything, mock.Anything).Return(f.quoteShipping)
	env.OnActivity("CheckCompliance", mock.Anything, mock.Anything).Return(f.checkCompliance)
	env.OnActivity("EstimateDutiesAndTaxes", mock.Anything, mock.Anything).Return(f.duties)
	env.OnActivity("ComputeTotal", mock.Anything, mock.Anything).Return(f.computeTotal)
	env.OnActivity("CreateDraftOrder", mock.Anything, mock.Anything).Return(f.createDraftOrder)
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

// envelopeFor fakes the invoker's envelope with a fresh snapshot id.
func (f *fixture) envelopeFor(tool string) toolkit.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapN++
	return toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: tool, Version: "1.0.0",
		Evidence: &toolkit.Evidence{SnapshotID: fmt.Sprintf("ev_test_%02d", f.snapN), Sources: []toolkit.Source{{Type: "tool", Name: tool, Hash: "sha256:test"}}}}
}

// enter records a call and returns the failure configured for it.
func (f *fixture) enter(name string, in any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name] = append(f.calls[name], in)
	if e := f.failures[name]; e != nil {
		return toolkit.ApplicationError(e)
	}
	return nil
}

func (f *fixture) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls[name])
}

func (f *fixture) getQuote(ctx context.Context, in activities.GetQuoteInput) (activities.GetQuoteResult, error) {
	if err := f.enter("GetQuote", in); err != nil {
		return activities.GetQuoteResult{}, err
	}
	now := f.env.Now()
	unit := f.unitPrice
	if !f.priceAfter.IsZero() && !now.Before(f.priceAfter) {
		unit = f.newPrice
	}
	q := commerce.Quote{QuoteID: fmt.Sprintf("q_%d", f.count("GetQuote")), Currency: in.Args.Currency, ExpiresAt: now.Add(15 * time.Minute), FXVersion: "fx-test"}
	for _, it := range in.Args.Items {
		line := commerce.QuoteLine{SKU: it.SKU, Title: "Headphones", Quantity: it.Quantity,
			UnitPrice: commerce.Money{Amount: unit, Currency: in.Args.Currency},
			LineTotal: commerce.Money{Amount: unit * int64(it.Quantity), Currency: in.Args.Currency},
			HSCode:    "851830", Origin: "CN", Category: "electronics", WeightGrams: 400}
		q.Lines = append(q.Lines, line)
		q.Subtotal.Amount += line.LineTotal.Amount
	}
	q.Subtotal.Currency = in.Args.Currency
	q.PriceHash, _ = commerce.PriceHash(q.Currency, q.Lines)
	if in.Args.ExpectedPriceHash != "" && in.Args.ExpectedPriceHash != q.PriceHash {
		return activities.GetQuoteResult{}, toolkit.ApplicationError(
			toolkit.Errorf(toolkit.PriceChanged, "prices changed since the quote the user saw").WithDetail("price_hash", q.PriceHash))
	}
	return activities.GetQuoteResult{Quote: q, Envelope: f.envelopeFor(commerce.ToolGetQuote)}, nil
}

func (f *fixture) quoteShipping(ctx context.Context, in activities.QuoteShippingInput) (activities.QuoteShippingResult, error) {
	if err := f.enter("QuoteShipping", in); err != nil {
		return activities.QuoteShippingResult{}, err
	}
	cur := in.Args.Currency
	opt := func(level string, cost int64) commerce.ShippingOption {
		return commerce.ShippingOption{OptionID: level, ServiceLevel: level, Carrier: "DHL", Cost: commerce.Money{Amount: cost, Currency: cur},
			MinDays: 2, MaxDays: 5, ChargeableGrams: 800, Zone: "EU", TransportMode: "air"}
	}
	return activities.QuoteShippingResult{
		Shipping: commerce.ShippingQuote{Options: []commerce.ShippingOption{opt("economy", 499), opt("standard", 899), opt("express", 1999)},
			ExpiresAt: f.env.Now().Add(30 * time.Minute), RulesetVersion: "shipping-test"},
		Envelope: f.envelopeFor(commerce.ToolQuoteShipping),
	}, nil
}

func (f *fixture) checkCompliance(ctx context.Context, in activities.CheckComplianceInput) (activities.CheckComplianceResult, error) {
	if err := f.enter("CheckCompliance", in); err != nil {
		return activities.CheckComplianceResult{}, err
	}
	return activities.CheckComplianceResult{Verdict: f.verdict, Envelope: f.envelopeFor(commerce.ToolCheckCompliance)}, nil
}

func (f *fixture) duties(ctx context.Context, in activities.EstimateDutiesAndTaxesInput) (activities.EstimateDutiesAndTaxesResult, error) {
	if err := f.enter("EstimateDutiesAndTaxes", in); err != nil {
		return activities.EstimateDutiesAndTaxesResult{}, err
	}
	cur := in.Args.Currency
	var base int64
	for _, l := range in.Args.Lines {
		base += l.LineTotal.Amount
	}
	base += in.Args.Shipping.Cost.Amount
	d := commerce.DutiesAndTaxes{Currency: cur, Incoterm: in.Args.Incoterm, Country: in.Args.Destination.Country,
		Duty: commerce.Money{Currency: cur}, Tax: commerce.Money{Amount: base * 19 / 100, Currency: cur},
		TaxName: "VAT", TaxRateBPS: 1900, CollectedAtCheckout: in.Args.Incoterm == commerce.IncotermDDP,
		Notes: []string{}, RulesetVersion: "tax-test"}
	return activities.EstimateDutiesAndTaxesResult{Duties: d, Envelope: f.envelopeFor(commerce.ToolDutiesAndTaxes)}, nil
}

func (f *fixture) computeTotal(ctx context.Context, in activities.ComputeTotalInput) (activities.ComputeTotalResult, error) {
	if err := f.enter("ComputeTotal", in); err != nil {
		return activities.ComputeTotalResult{}, err
	}
	t, err := commerce.ComputeTotal(in.Args)
	if err != nil {
		return activities.ComputeTotalResult{}, toolkit.ApplicationError(err)
	}
	return activities.ComputeTotalResult{Total: t, Envelope: f.envelopeFor(commerce.ToolComputeTotal)}, nil
}

func (f *fixture) createDraftOrder(ctx context.Context, in activities.CreateDraftOrderInput) (activities.CreateDraftOrderResult, error) {
	if err := f.enter("CreateDraftOrder", in); err != nil {
		return activities.CreateDraftOrderResult{}, err
	}
	if in.Args.ConfirmedQuoteHash != in.Args.Total.QuoteHash || in.Request.IdempotencyKey == "" {
		return activities.CreateDraftOrderResult{}, toolkit.ApplicationError(toolkit.Errorf(toolkit.NeedsUserConfirmation, "not confirmed"))
	}
	return activities.CreateDraftOrderResult{
		DraftOrder: commerce.DraftOrder{DraftOrderID: "do_01TEST", ExpiresAt: f.env.Now().Add(24 * time.Hour), Status: commerce.DraftStatusOpen,
			QuoteHash: in.Args.Total.QuoteHash, GrandTotal: in.Args.Total.GrandTotal},
		Envelope: f.envelopeFor(commerce.ToolCreateDraftOrder),
	}, nil
}

// staff mirrors migration 00005_staff.sql.
var staff = map[string]struct {
	role   string
	active bool
}{
	"alice.support": {"support", true}, "bob.compliance": {"compliance", true},
	"carol.admin": {"admin", true}, "dave.former": {"support", false},
}

func (f *fixture) recordApproval(ctx context.Context, in activities.RecordApprovalInput) (activities.RecordApprovalResult, error) {
	if err := f.enter("RecordApproval", in); err != nil {
		return activities.RecordApprovalResult{}, err
	}
	m, ok := staff[in.Args.Approver]
	switch {
	case !ok:
		return activities.RecordApprovalResult{}, toolkit.ApplicationError(toolkit.Errorf(toolkit.NotFound, "approver %s is not on the staff roster", in.Args.Approver))
	case !m.active:
		return activities.RecordApprovalResult{}, toolkit.ApplicationError(toolkit.Errorf(toolkit.Forbidden, "approver %s is no longer an active staff member", in.Args.Approver))
	}
	a := in.Args
	return activities.RecordApprovalResult{
		Record: support.ApprovalRecord{Flow: a.Flow, Subject: a.Subject, ApprovalID: a.ApprovalID, Decision: a.Decision,
			Approver: a.Approver, ApproverRole: m.role, Reason: a.Reason, StaffVerified: true},
		Envelope: f.envelopeFor(support.RecordApprovalTool),
	}, nil
}

// run executes the workflow to its end and returns its result.
func (f *fixture) run() DraftOrderResult {
	f.t.Helper()
	f.env.ExecuteWorkflow(DraftOrder, f.in)
	if !f.env.IsWorkflowCompleted() {
		f.t.Fatal("workflow did not complete")
	}
	if err := f.env.GetWorkflowError(); err != nil {
		f.t.Fatalf("workflow failed: %v", err)
	}
	var res DraftOrderResult
	if err := f.env.GetWorkflowResult(&res); err != nil {
		f.t.Fatal(err)
	}
	return res
}

// status queries the running workflow.
func (f *fixture) status() DraftOrderStatus {
	f.t.Helper()
	v, err := f.env.QueryWorkflow(QueryStatus)
	if err != nil {
		f.t.Fatalf("query status: %v", err)
	}
	var s DraftOrderStatus
	if err := v.Get(&s); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// at runs fn at d after the start of the workflow.
func (f *fixture) at(d time.Duration, fn func()) { f.env.RegisterDelayedCallback(fn, d) }

// confirmPublished sends a confirm with the published quote_hash.
func (f *fixture) confirmPublished() {
	s := f.status()
	if s.Confirmation == nil {
		f.t.Errorf("no confirmation is published (state %s)", s.State)
		return
	}
	f.env.SignalWorkflow(SignalConfirm, ConfirmSignal{QuoteHash: s.Confirmation.QuoteHash})
}

// approve sends an approval for the pending approval id.
func (f *fixture) approval(decision, approver, reason string) {
	s := f.status()
	if s.Approvals.Pending == nil {
		f.t.Errorf("no approval is pending (state %s)", s.State)
		return
	}
	f.env.SignalWorkflow(SignalApproval, ApprovalSignal{ApprovalID: s.Approvals.Pending.ApprovalID, Decision: decision, Approver: approver, Reason: reason})
}

// rejectedReasons lists the reasons of the rejected signals in order.
func rejectedReasons(l SignalLog) []string {
	out := []string{}
	for _, r := range l.Rejected {
		out = append(out, r.Signal+":"+r.Reason)
	}
	return out
}
