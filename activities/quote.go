package activities

import (
	"context"
	"errors"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Steps of a draft order's quote, each one tool call with its own
// correlation id (the workflow derives the ids from the step names).
const (
	StepOrigins    = "origins"
	StepPricing    = "pricing"
	StepPricingNew = "pricing-new"
	StepCompliance = "compliance"
	StepTotal      = "total"
)

// QuoteStep is one step of a quote and the tool it calls.
type QuoteStep struct{ Step, Tool string }

// QuoteSteps are the steps Quote may make, in order: what the workflow
// gives a request envelope, and whose tools' timeouts bound an attempt.
var QuoteSteps = []QuoteStep{
	{StepOrigins, commerce.ToolChooseOrigins}, {StepPricing, commerce.ToolGetQuote}, {StepPricingNew, commerce.ToolGetQuote},
	{StepCompliance, commerce.ToolCheckCompliance}, {StepTotal, commerce.ToolComputeTotal},
}

// QuoteInput is one quote of a draft order: the order, the request
// envelope of each step (correlation ids included) and what earlier
// quotes of the run settled.
type QuoteInput struct {
	Order commerce.Order `json:"order"`
	// ApprovalConfidence: a verdict below it needs support staff, and
	// Quote stops before the total (docs/approvals.md#confidence-threshold).
	ApprovalConfidence float64                    `json:"approval_confidence"`
	Requests           map[string]toolkit.Request `json:"requests"`
	// ExpectedPriceHash is the price hash the user saw (a re-quote):
	// pricing answers PRICE_CHANGED when prices moved, and the quote
	// asks again without it (StepPricingNew) for the new prices.
	ExpectedPriceHash string `json:"expected_price_hash,omitempty"`
	// Cleared is an earlier quote's compliance answer that let the order
	// go on; it stands while the parcels' transport mode is the same.
	Cleared *ClearedCompliance `json:"cleared,omitempty"`
	// CheckRates: the run's first quote starts with the start check only
	// a worker can answer, the order's currency against the exchange
	// rates in use (docs/tools.md#exchange-rates), and stops there when
	// they refuse it. In the quote's local activity it costs no step of
	// its own.
	CheckRates bool `json:"check_rates,omitempty"`
}

// ClearedCompliance is a compliance answer the order went on with: its
// snapshot, the transport mode it was for, and the support-staff
// approval that cleared it ("" when it needed none).
type ClearedCompliance struct {
	SnapshotID         string `json:"snapshot_id"`
	Mode               string `json:"mode"`
	ApprovalSnapshotID string `json:"approval_snapshot_id,omitempty"`
}

// QuoteResult is every call a quote made, in order, with its envelope
// (auditors find each under "calls"[].envelope). A refusal is an
// answer like any other; the quote stops at it.
type QuoteResult struct {
	Calls []StepCall `json:"calls"`
	// CurrencyRefused is the rates in use's refusal of the order's
	// currency (CheckRates): nothing was called, nothing written.
	CurrencyRefused *toolkit.Error `json:"currency_refused,omitempty"`
}

// StepCall is one tool call of a quote or a price.
type StepCall struct {
	Step     string           `json:"step"`
	Tool     string           `json:"tool"`
	Envelope toolkit.Response `json:"envelope"`
}

// Answer is the envelope of step's call, if the quote made it.
func (r QuoteResult) Answer(step string) (toolkit.Response, bool) {
	for _, c := range r.Calls {
		if c.Step == step {
			return c.Envelope, true
		}
	}
	return toolkit.Response{}, false
}

// PriceInput totals a quote whose compliance support staff cleared: the
// snapshots the total is derived from and the total's request envelope.
type PriceInput struct {
	Refs    commerce.EvidenceRefs `json:"refs"`
	Request toolkit.Request       `json:"request"`
}

// PriceResult is the total's call, in the shape of a quote's calls.
type PriceResult struct {
	Calls []StepCall `json:"calls"`
}

// StepCaller makes one tool call of a quote and answers as Call does:
// the envelope of any answer, or the error of a failure worth retrying.
type StepCaller func(ctx context.Context, tool string, req toolkit.Request, input any) (toolkit.Response, error)

// Quote is a draft order's quote in one local activity: the origin
// choice, pricing where it chose, compliance for the parcels' strictest
// transport mode and, when nothing needs a person, the total derived from
// those snapshots — each call through the invoker, their evidence staged
// in one batch and written in one round trip (docs/performance.md#one-quote-step).
// A failure worth retrying fails the attempt; the workflow's retry story
// (workflows/internal/flow.Steps) takes it from there.
func (a *Tools) Quote(ctx context.Context, in QuoteInput) (QuoteResult, error) {
	if in.CheckRates {
		if refusal := a.refuseCurrency(ctx, in.Order.Currency); refusal != nil {
			return QuoteResult{Calls: []StepCall{}, CurrencyRefused: refusal}, nil
		}
	}
	ctx = commerce.WithCatalogMemo(ctx)
	return inBatch(ctx, a.Invoker, func(call StepCaller) (QuoteResult, error) { return RunQuote(ctx, in, call) })
}

// Price derives and seals the total of a quote support staff cleared, in
// one local activity (the same story as Quote's).
func (a *Tools) Price(ctx context.Context, in PriceInput) (PriceResult, error) {
	return inBatch(ctx, a.Invoker, func(call StepCaller) (PriceResult, error) { return RunPrice(ctx, in, call) })
}

// inBatch runs steps with their snapshots staged in one batch, then
// writes it. A step that already has a snapshot (the activity ran before,
// its workflow task lost) makes the calls again one by one, so each
// answers what its evidence holds.
func inBatch[R any](ctx context.Context, inv *toolkit.Invoker, steps func(StepCaller) (R, error)) (R, error) {
	batch := inv.NewBatch()
	callIn := func(b *toolkit.Batch) StepCaller {
		return func(ctx context.Context, tool string, req toolkit.Request, input any) (toolkit.Response, error) {
			return CallIn(ctx, inv, b, tool, req, input)
		}
	}
	res, err := steps(callIn(batch))
	if err != nil {
		return res, err
	}
	err = inv.CommitBatch(ctx, batch)
	if errors.Is(err, toolkit.ErrStepRecorded) {
		return steps(callIn(nil))
	}
	if err != nil {
		var zero R
		return zero, ApplicationError(err)
	}
	return res, nil
}

// RunQuote makes a quote's calls through call; Quote runs it on the
// invoker, and workflow tests on their fakes.
func RunQuote(ctx context.Context, in QuoteInput, call StepCaller) (QuoteResult, error) {
	s := &steps{ctx: ctx, exec: call, reqs: in.Requests}
	var plan commerce.OriginPlan
	if !s.call(StepOrigins, commerce.ToolChooseOrigins, in.Order.OriginsArgs(), &plan) || len(plan.Parcels) == 0 {
		return s.result()
	}
	pricing := commerce.GetQuoteArgs{Items: in.Order.Items, Currency: in.Order.Currency, ExpectedPriceHash: in.ExpectedPriceHash}
	if plan.Split {
		pricing.Items = make([]commerce.LineItem, len(in.Order.Items))
		for i, it := range in.Order.Items {
			pricing.Items[i] = commerce.LineItem{SKU: it.SKU, Quantity: it.Quantity, ShipFrom: plan.ShipFromOf(it.SKU)}
		}
	} else {
		pricing.ShipFrom = plan.Parcels[0].ShipFrom
	}
	refs := commerce.EvidenceRefs{OriginsSnapshotID: s.snapshotOf(StepOrigins)}
	if !s.call(StepPricing, commerce.ToolGetQuote, pricing, nil) {
		if env, _ := s.answer(StepPricing); in.ExpectedPriceHash == "" || env.Error == nil || env.Error.Code != toolkit.PriceChanged {
			return s.result()
		}
		// The tool confirmed the change; ask once more without the
		// expectation for the new quote itself.
		pricing.ExpectedPriceHash = ""
		if !s.call(StepPricingNew, commerce.ToolGetQuote, pricing, nil) {
			return s.result()
		}
		refs.PricingSnapshotID = s.snapshotOf(StepPricingNew)
	} else {
		refs.PricingSnapshotID = s.snapshotOf(StepPricing)
	}
	mode := commerce.StrictestMode(plan)
	if c := in.Cleared; c != nil && c.Mode == mode {
		refs.ComplianceSnapshotID, refs.ApprovalSnapshotID = c.SnapshotID, c.ApprovalSnapshotID
	} else {
		var v commerce.ComplianceVerdict
		if !s.call(StepCompliance, commerce.ToolCheckCompliance,
			commerce.CheckComplianceArgs{Items: in.Order.Items, Destination: in.Order.ShipTo, TransportMode: mode}, &v) ||
			v.NeedsApproval(in.ApprovalConfidence) {
			return s.result() // blocked, or support staff decide first
		}
		refs.ComplianceSnapshotID = s.snapshotOf(StepCompliance)
	}
	s.call(StepTotal, commerce.ToolComputeTotal, commerce.ComputeTotalArgs{EvidenceRefs: refs}, nil)
	return s.result()
}

// RunPrice makes a price's one call through call.
func RunPrice(ctx context.Context, in PriceInput, call StepCaller) (PriceResult, error) {
	s := &steps{ctx: ctx, exec: call, reqs: map[string]toolkit.Request{StepTotal: in.Request}}
	s.call(StepTotal, commerce.ToolComputeTotal, commerce.ComputeTotalArgs{EvidenceRefs: in.Refs}, nil)
	res, err := s.result()
	return PriceResult{Calls: res.Calls}, err
}

// steps are one Quote's or Price's calls so far.
type steps struct {
	ctx   context.Context
	exec  StepCaller
	reqs  map[string]toolkit.Request
	calls []StepCall
	err   error
}

// call makes one step's call and decodes its data into out (nil: the
// quote needs nothing of it); ok is false for a refusal, an undecodable
// answer, or a failure (kept in s.err).
func (s *steps) call(step, tool string, args any, out any) bool {
	if s.err != nil {
		return false
	}
	env, err := s.exec(s.ctx, tool, s.reqs[step], args)
	if err != nil {
		s.err = err
		return false
	}
	s.calls = append(s.calls, StepCall{Step: step, Tool: tool, Envelope: env})
	return env.OK && (out == nil || env.Decode(out) == nil)
}

// answer is the envelope of step's call so far.
func (s *steps) answer(step string) (toolkit.Response, bool) {
	return QuoteResult{Calls: s.calls}.Answer(step)
}

// snapshotOf is the evidence snapshot id of step's answer.
func (s *steps) snapshotOf(step string) string {
	env, _ := s.answer(step)
	return env.SnapshotID()
}

func (s *steps) result() (QuoteResult, error) {
	if s.err != nil {
		return QuoteResult{}, s.err
	}
	return QuoteResult{Calls: s.calls}, nil
}
