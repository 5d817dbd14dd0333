package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// fixture is a DraftOrder run on the test environment with every activity
// mocked by a small fake of the commerce and support tools. Tests change
// the fake's answers (unit prices, verdict, failures) before Run.
type fixture struct {
	fakeEnv
	in DraftOrderInput

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
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		unitPrice: 2500, newPrice: 2500,
		verdict: commerce.ComplianceVerdict{Verdict: commerce.VerdictAllow, Confidence: 0.97, Reasons: []commerce.ComplianceReason{}, RulesetVersion: "compliance-test"},
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
	f.init(t, id, "ev_test_")
	f.registerWorkflows()
	f.fakeTools(map[string]any{
		commerce.ToolGetQuote: f.getQuote, commerce.ToolQuoteShipping: f.quoteShipping, commerce.ToolCheckCompliance: f.checkCompliance,
		commerce.ToolDutiesAndTaxes: f.duties, commerce.ToolComputeTotal: f.computeTotal, commerce.ToolCreateDraftOrder: f.createDraftOrder,
		commerce.ToolChooseOrigins: f.chooseOrigins,
	})
	return f
}

// chooseOrigins chooses DE, the one warehouse of the fixture.
func (f *fixture) chooseOrigins(ctx context.Context, in toolIn[commerce.ChooseOriginsArgs]) (toolOut[commerce.OriginPlan], error) {
	if err := f.enter("ChooseOrigins", in); err != nil {
		return toolOut[commerce.OriginPlan]{}, err
	}
	cur := in.Args.Currency
	landed := commerce.LandedCost{Goods: commerce.Money{Currency: cur}, Shipping: commerce.Money{Currency: cur},
		Duty: commerce.Money{Currency: cur}, Tax: commerce.Money{Currency: cur}, Total: commerce.Money{Currency: cur}}
	plan := commerce.OriginPlan{Currency: cur, Destination: in.Args.Destination.Country, ShippingService: in.Args.ShippingService,
		Incoterm: in.Args.Incoterm, Rule: commerce.OriginRule, ExpiresAt: f.env.Now().Add(30 * time.Minute),
		Parcels:    []commerce.ParcelQuote{{ShipFrom: "DE", Items: in.Args.Items, Landed: landed}},
		Candidates: []commerce.OriginCandidate{{Origins: []string{"DE"}, Fills: true, MeetsService: true, Landed: &landed, Chosen: true}},
		Landed:     landed, RulesetVersion: "origins-test"}
	return toolOut[commerce.OriginPlan]{Data: plan, Envelope: f.envelopeFor(commerce.ToolChooseOrigins, toolkit.StatusOK)}, nil
}

func (f *fixture) getQuote(ctx context.Context, in toolIn[commerce.GetQuoteArgs]) (toolOut[commerce.Quote], error) {
	if err := f.enter("GetQuote", in); err != nil {
		return toolOut[commerce.Quote]{}, err
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
		return toolOut[commerce.Quote]{}, activities.ApplicationError(
			toolkit.Errorf(toolkit.PriceChanged, "prices changed since the quote the user saw").WithDetail("price_hash", q.PriceHash))
	}
	return toolOut[commerce.Quote]{Data: q, Envelope: f.envelopeFor(commerce.ToolGetQuote, toolkit.StatusOK)}, nil
}

func (f *fixture) quoteShipping(ctx context.Context, in toolIn[commerce.QuoteShippingArgs]) (toolOut[commerce.ShippingQuote], error) {
	if err := f.enter("QuoteShipping", in); err != nil {
		return toolOut[commerce.ShippingQuote]{}, err
	}
	cur := in.Args.Currency
	opt := func(level string, cost int64) commerce.ShippingOption {
		return commerce.ShippingOption{OptionID: level, ServiceLevel: level, Carrier: "DHL", Cost: commerce.Money{Amount: cost, Currency: cur},
			MinDays: 2, MaxDays: 5, ChargeableGrams: 800, Zone: "EU", TransportMode: f.mode(level)}
	}
	return toolOut[commerce.ShippingQuote]{
		Data: commerce.ShippingQuote{Options: []commerce.ShippingOption{opt("economy", 499), opt("standard", 899), opt("express", 1999)},
			ExpiresAt: f.env.Now().Add(30 * time.Minute), RulesetVersion: "shipping-test"},
		Envelope: f.envelopeFor(commerce.ToolQuoteShipping, toolkit.StatusOK),
	}, nil
}

func (f *fixture) checkCompliance(ctx context.Context, in toolIn[commerce.CheckComplianceArgs]) (toolOut[commerce.ComplianceVerdict], error) {
	if err := f.enter("CheckCompliance", in); err != nil {
		return toolOut[commerce.ComplianceVerdict]{}, err
	}
	mode := in.Args.TransportMode
	if mode == "" {
		mode = "air" // the tool's strict default
	}
	if f.blockAir && mode == "air" {
		return toolOut[commerce.ComplianceVerdict]{}, activities.ApplicationError(
			toolkit.Errorf(toolkit.ComplianceBlocked, "the order cannot ship to DE by air").WithDetail("rule", "DG_LITHIUM_ION_STANDALONE_AIR"))
	}
	v := f.verdict
	v.TransportMode = mode
	return toolOut[commerce.ComplianceVerdict]{Data: v, Envelope: f.envelopeFor(commerce.ToolCheckCompliance, toolkit.StatusOK)}, nil
}

func (f *fixture) duties(ctx context.Context, in toolIn[commerce.DutiesAndTaxesArgs]) (toolOut[commerce.DutiesAndTaxes], error) {
	if err := f.enter("EstimateDutiesAndTaxes", in); err != nil {
		return toolOut[commerce.DutiesAndTaxes]{}, err
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
	return toolOut[commerce.DutiesAndTaxes]{Data: d, Envelope: f.envelopeFor(commerce.ToolDutiesAndTaxes, toolkit.StatusOK)}, nil
}

func (f *fixture) computeTotal(ctx context.Context, in toolIn[commerce.ComputeTotalArgs]) (toolOut[commerce.Total], error) {
	if err := f.enter("ComputeTotal", in); err != nil {
		return toolOut[commerce.Total]{}, err
	}
	t, err := commerce.ComputeTotal(in.Args)
	if err != nil {
		return toolOut[commerce.Total]{}, activities.ApplicationError(err)
	}
	return toolOut[commerce.Total]{Data: t, Envelope: f.envelopeFor(commerce.ToolComputeTotal, toolkit.StatusOK)}, nil
}

func (f *fixture) createDraftOrder(ctx context.Context, in toolIn[commerce.CreateDraftOrderArgs]) (toolOut[commerce.DraftOrder], error) {
	if f.beforeCreate != nil {
		f.beforeCreate(ctx)
	}
	if err := f.enter("CreateDraftOrder", in); err != nil {
		return toolOut[commerce.DraftOrder]{}, err
	}
	if in.Args.ConfirmedQuoteHash != in.Args.Total.QuoteHash || in.Request.IdempotencyKey == "" {
		return toolOut[commerce.DraftOrder]{}, activities.ApplicationError(toolkit.Errorf(toolkit.NeedsUserConfirmation, "not confirmed"))
	}
	return toolOut[commerce.DraftOrder]{
		Data: commerce.DraftOrder{DraftOrderID: "do_01TEST", ExpiresAt: f.env.Now().Add(24 * time.Hour), Status: commerce.DraftStatusOpen,
			QuoteHash: in.Args.Total.QuoteHash, GrandTotal: in.Args.Total.GrandTotal},
		Envelope: f.envelopeFor(commerce.ToolCreateDraftOrder, toolkit.StatusOK),
	}, nil
}

// mode is the transport mode of level's option now.
func (f *fixture) mode(level string) string {
	if f.modeOf == nil {
		return "air"
	}
	return f.modeOf(level, f.env.Now())
}

// run executes the workflow to its end and returns its result.
func (f *fixture) run() DraftOrderResult {
	f.t.Helper()
	return runWorkflow[DraftOrderResult](&f.fakeEnv, DraftOrderWorkflowName, f.in)
}

// status queries the running workflow.
func (f *fixture) status() DraftOrderStatus {
	f.t.Helper()
	return queryStatus[DraftOrderStatus](&f.fakeEnv)
}

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
	f.env.SignalWorkflow(SignalApproval, sealedAs(approver, s.Approvals.Pending.ApprovalID, decision, reason))
}

// sealedAs is the approval payload approver sends after signing in: sealed
// by the codec server for them (the test ring). A decision the codec server
// would not seal (a rejection without reason …) goes unsealed, naming the
// approver, for the workflow to refuse.
func sealedAs(approver, approvalID, decision, reason string) ApprovalSignal {
	d := support.Decision{ApprovalID: approvalID, Decision: decision, Reason: reason}
	sealed, err := sealtest.As(approver).SealDecision(context.Background(), d)
	if err != nil {
		return ApprovalSignal{ApprovalID: approvalID, Decision: decision, Approver: approver, Reason: reason}
	}
	return SignalOf(sealed)
}

// unsealedApproval sends what a raw `temporal workflow signal` can: a
// decision naming approver, with no seal.
func (f *fixture) unsealedApproval(decision, approver, reason string) {
	s := f.status()
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
