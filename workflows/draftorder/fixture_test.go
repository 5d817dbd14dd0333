package draftorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// fixture is a DraftOrder run on the test environment with every activity
// mocked by a small fake of the commerce and support tools. Tests change
// the fake's answers (unit prices, verdict, failures) before Run.
type fixture struct {
	flowtest.FakeEnv
	in Input

	// unitPrice is the price pricing answers with (per SKU, minor units);
	// priceAfter switches it for calls made at or after that time.
	unitPrice  int64
	newPrice   int64
	priceAfter time.Time
	verdict    commerce.ComplianceVerdict
	// modeOf is the transport mode of a service level's option at a time
	// (nil: every option flies).
	modeOf func(level string, now time.Time) string
	// blockAir makes compliance block the basket by air (a power bank).
	blockAir bool
	// beforeCreate, if set, sees each create call's context first.
	beforeCreate func(ctx context.Context)
	// held is how the written draft's hold stands in the fake ledger
	// ("", committed, released); moves counts the stock movements.
	held  string
	moves int
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		unitPrice: 2500, newPrice: 2500,
		verdict: commerce.ComplianceVerdict{Verdict: commerce.VerdictAllow, Confidence: 0.97, Reasons: []commerce.ComplianceReason{}, RulesetVersion: "compliance-test"},
	}
	f.in = Input{
		Request: toolkit.Request{
			RequestID: "req-test", UserID: "u_123", IdempotencyKey: "key-0001-abcd",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_123"}, Currency: "EUR",
		},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"}},
	}
	id, _ := workflows.DraftOrderID("u_123", "key-0001-abcd")
	f.Init(t, id, "ev_test_")
	f.Env.RegisterWorkflowWithOptions(Flow{Specs: flow.NewToolSpecs(flowtest.TestSpecs())}.Run, workflow.RegisterOptions{Name: WorkflowName})
	f.FakeTools(map[string]any{
		commerce.ToolGetQuote: f.getQuote, commerce.ToolCheckCompliance: f.checkCompliance,
		commerce.ToolComputeTotal: f.computeTotal, commerce.ToolCreateDraftOrder: f.createDraftOrder,
		commerce.ToolChooseOrigins: f.chooseOrigins, commerce.ToolSettleStock: f.settleStock,
	})
	return f
}

// chooseOrigins chooses DE, the one warehouse of the fixture: its
// parcel's option of the service (economy 4.99, standard 8.99, express
// 19.99, by f.mode) and a 19% VAT on goods and shipping.
func (f *fixture) chooseOrigins(ctx context.Context, in flowtest.ToolIn[commerce.ChooseOriginsArgs]) (flowtest.ToolOut[commerce.OriginPlan], error) {
	if err := f.Enter("ChooseOrigins", in); err != nil {
		return flowtest.ToolOut[commerce.OriginPlan]{}, err
	}
	cur, now := in.Args.Currency, f.Env.Now()
	var goods int64
	for _, it := range in.Args.Items {
		goods += f.unitAt(now) * int64(it.Quantity)
	}
	opts := f.options(cur)
	i := commerce.ChooseOption(opts, in.Args.ShippingService)
	if i < 0 {
		return flowtest.ToolOut[commerce.OriginPlan]{}, activities.ApplicationError(toolkit.Errorf(toolkit.InvalidArgument, "no option"))
	}
	ship := opts[i]
	d := commerce.DutiesAndTaxes{ShipFrom: "DE", Currency: cur, Incoterm: in.Args.Incoterm, Country: in.Args.Destination.Country,
		Duty: commerce.Money{Currency: cur}, Tax: commerce.Money{Amount: (goods + ship.Cost.Amount) * 19 / 100, Currency: cur},
		TaxName: "VAT", TaxRateBPS: 1900, CollectedAtCheckout: in.Args.Incoterm == commerce.IncotermDDP,
		Notes: []string{}, RulesetVersion: "tax-test"}
	m := func(a int64) commerce.Money { return commerce.Money{Amount: a, Currency: cur} }
	landed := commerce.LandedCost{Goods: m(goods), Shipping: ship.Cost, Duty: d.Duty, Tax: d.Tax,
		Total: m(goods + ship.Cost.Amount + d.Tax.Amount)}
	plan := commerce.OriginPlan{Currency: cur, Destination: in.Args.Destination.Country, ShippingService: in.Args.ShippingService,
		Incoterm: in.Args.Incoterm, Rule: commerce.OriginRule, ExpiresAt: now.Add(30 * time.Minute),
		Parcels:    []commerce.ParcelQuote{{ShipFrom: "DE", Items: in.Args.Items, Shipping: ship, Duties: d, Landed: landed}},
		Candidates: []commerce.OriginCandidate{{Origins: []string{"DE"}, Fills: true, MeetsService: true, Landed: &landed, Chosen: true}},
		Landed:     landed, RulesetVersion: "origins-test"}
	return flowtest.ToolOut[commerce.OriginPlan]{Data: plan, Envelope: f.EnvelopeFor(commerce.ToolChooseOrigins, toolkit.StatusOK)}, nil
}

// unitAt is the unit price of every SKU at now.
func (f *fixture) unitAt(now time.Time) int64 {
	if !f.priceAfter.IsZero() && !now.Before(f.priceAfter) {
		return f.newPrice
	}
	return f.unitPrice
}

func (f *fixture) getQuote(ctx context.Context, in flowtest.ToolIn[commerce.GetQuoteArgs]) (flowtest.ToolOut[commerce.Quote], error) {
	if err := f.Enter("GetQuote", in); err != nil {
		return flowtest.ToolOut[commerce.Quote]{}, err
	}
	now := f.Env.Now()
	unit := f.unitAt(now)
	q := commerce.Quote{QuoteID: fmt.Sprintf("q_%d", f.Count("GetQuote")), Currency: in.Args.Currency, ExpiresAt: now.Add(15 * time.Minute),
		FXVersion: "fx-test", ShipFrom: in.Args.ShipFrom}
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
		return flowtest.ToolOut[commerce.Quote]{}, activities.ApplicationError(
			toolkit.Errorf(toolkit.PriceChanged, "prices changed since the quote the user saw").WithDetail("price_hash", q.PriceHash))
	}
	return flowtest.ToolOut[commerce.Quote]{Data: q, Envelope: f.EnvelopeFor(commerce.ToolGetQuote, toolkit.StatusOK)}, nil
}

// options are the fixture's shipping options now, in cur.
func (f *fixture) options(cur string) []commerce.ShippingOption {
	opt := func(level string, cost int64) commerce.ShippingOption {
		return commerce.ShippingOption{OptionID: level, ServiceLevel: level, Carrier: "DHL", Cost: commerce.Money{Amount: cost, Currency: cur},
			MinDays: 2, MaxDays: 5, ChargeableGrams: 800, Zone: "EU", TransportMode: f.mode(level), ShipFrom: "DE"}
	}
	return []commerce.ShippingOption{opt("economy", 499), opt("standard", 899), opt("express", 1999)}
}

func (f *fixture) checkCompliance(ctx context.Context, in flowtest.ToolIn[commerce.CheckComplianceArgs]) (flowtest.ToolOut[commerce.ComplianceVerdict], error) {
	if err := f.Enter("CheckCompliance", in); err != nil {
		return flowtest.ToolOut[commerce.ComplianceVerdict]{}, err
	}
	mode := in.Args.TransportMode
	if mode == "" {
		mode = "air" // the tool's strict default
	}
	if f.blockAir && mode == "air" {
		return flowtest.ToolOut[commerce.ComplianceVerdict]{}, activities.ApplicationError(
			toolkit.Errorf(toolkit.ComplianceBlocked, "the order cannot ship to DE by air").WithDetail("rule", "DG_LITHIUM_ION_STANDALONE_AIR"))
	}
	v := f.verdict
	v.TransportMode = mode
	v.Items, v.Destination = in.Args.Items, &commerce.VerdictDestination{Country: in.Args.Destination.Country}
	v.ReviewRoles = []string{support.RoleCompliance, support.RoleAdmin}
	return flowtest.ToolOut[commerce.ComplianceVerdict]{Data: v, Envelope: f.EnvelopeFor(commerce.ToolCheckCompliance, toolkit.StatusOK)}, nil
}

// computeTotal derives the total from the fake answers its snapshots
// name, as the tool derives it from the evidence.
func (f *fixture) computeTotal(ctx context.Context, in flowtest.ToolIn[commerce.ComputeTotalArgs]) (flowtest.ToolOut[commerce.Total], error) {
	if err := f.Enter("ComputeTotal", in); err != nil {
		return flowtest.ToolOut[commerce.Total]{}, err
	}
	var plan commerce.OriginPlan
	var q commerce.Quote
	if !f.Answer(in.Args.OriginsSnapshotID, &plan) || !f.Answer(in.Args.PricingSnapshotID, &q) {
		return flowtest.ToolOut[commerce.Total]{}, activities.ApplicationError(toolkit.Errorf(toolkit.Forbidden, "evidence missing"))
	}
	parts, err := commerce.PartsOf(plan, q)
	if err != nil {
		return flowtest.ToolOut[commerce.Total]{}, activities.ApplicationError(err)
	}
	t, err := commerce.ComputeTotal(parts)
	if err != nil {
		return flowtest.ToolOut[commerce.Total]{}, activities.ApplicationError(err)
	}
	t.Evidence = &commerce.TotalEvidence{EvidenceRefs: in.Args.EvidenceRefs, IssuedAt: f.Env.Now()}
	return flowtest.ToolOut[commerce.Total]{Data: t, Envelope: f.EnvelopeFor(commerce.ToolComputeTotal, toolkit.StatusOK)}, nil
}

func (f *fixture) createDraftOrder(ctx context.Context, in flowtest.ToolIn[commerce.CreateDraftOrderArgs]) (flowtest.ToolOut[commerce.DraftOrder], error) {
	if f.beforeCreate != nil {
		f.beforeCreate(ctx)
	}
	if err := f.Enter("CreateDraftOrder", in); err != nil {
		return flowtest.ToolOut[commerce.DraftOrder]{}, err
	}
	if in.Args.ConfirmedQuoteHash != in.Args.Total.QuoteHash || in.Request.IdempotencyKey == "" {
		return flowtest.ToolOut[commerce.DraftOrder]{}, activities.ApplicationError(toolkit.Errorf(toolkit.NeedsUserConfirmation, "not confirmed"))
	}
	return flowtest.ToolOut[commerce.DraftOrder]{
		Data: commerce.DraftOrder{DraftOrderID: "do_01TEST", ExpiresAt: f.Env.Now().Add(24 * time.Hour), Status: commerce.DraftStatusOpen,
			QuoteHash: in.Args.Total.QuoteHash, GrandTotal: in.Args.Total.GrandTotal},
		Envelope: f.EnvelopeFor(commerce.ToolCreateDraftOrder, toolkit.StatusOK),
	}, nil
}

// mode is the transport mode of level's option now.
func (f *fixture) mode(level string) string {
	if f.modeOf == nil {
		return "air"
	}
	return f.modeOf(level, f.Env.Now())
}

// run executes the workflow to its end and returns its result.
func (f *fixture) run() Result {
	f.T.Helper()
	return flowtest.RunWorkflow[Result](&f.FakeEnv, WorkflowName, f.in)
}

// status queries the running workflow.
func (f *fixture) status() Status {
	f.T.Helper()
	return flowtest.FetchStatus[Status](&f.FakeEnv)
}

// confirmPublished sends a confirm with the published quote_hash.
func (f *fixture) confirmPublished() {
	s := f.status()
	if s.Confirmation == nil {
		f.T.Errorf("no confirmation is published (state %s)", s.State)
		return
	}
	f.Env.SignalWorkflow(SignalConfirm, ConfirmSignal{QuoteHash: s.Confirmation.QuoteHash})
}

// approve sends an approval for the pending approval id.
func (f *fixture) approval(decision, approver, reason string) {
	s := f.status()
	if s.Approvals.Pending == nil {
		f.T.Errorf("no approval is pending (state %s)", s.State)
		return
	}
	f.Env.SignalWorkflow(approval.SignalApproval, flowtest.SealedAs(approver, s.Approvals.Pending.ApprovalID, decision, reason))
}

// unsealedApproval sends what a raw `temporal workflow signal` can: a
// decision naming approver, with no seal.
func (f *fixture) unsealedApproval(decision, approver, reason string) {
	s := f.status()
	f.Env.SignalWorkflow(approval.SignalApproval, approval.Signal{ApprovalID: s.Approvals.Pending.ApprovalID, Decision: decision, Approver: approver, Reason: reason})
}
