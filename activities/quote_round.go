package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Quote-round steps, in the order QuoteRound calls them; the workflow
// names its steps the same.
const (
	StepPricing    = "pricing"
	StepShipping   = "shipping"
	StepCompliance = "compliance"
	StepDuties     = "duties"
	StepTotal      = "total"
	// StepOrigins is the origin choice, each round's first call
	// (docs/tools.md#origin-choice).
	StepOrigins = "origins"
)

// RoundStep is one step of a quote round and the tool it calls.
type RoundStep struct{ Step, Tool string }

// QuoteRoundSteps are a quote round's steps in order: what the workflow
// gives a request envelope and a timeout for.
var QuoteRoundSteps = []RoundStep{
	{StepOrigins, commerce.ToolChooseOrigins}, {StepPricing, commerce.ToolGetQuote}, {StepShipping, commerce.ToolQuoteShipping},
	{StepCompliance, commerce.ToolCheckCompliance}, {StepDuties, commerce.ToolDutiesAndTaxes},
	{StepTotal, commerce.ToolComputeTotal},
}

// QuoteRoundInput is a draft order's first quote round as the workflow
// would make it: the order's facts and the request envelope of each step
// (correlation ids included), keyed by step.
type QuoteRoundInput struct {
	Items              []commerce.LineItem        `json:"items"`
	ShipTo             commerce.Address           `json:"ship_to"`
	Currency           string                     `json:"currency"`
	ShippingService    string                     `json:"shipping_service"`
	Incoterm           string                     `json:"incoterm"`
	ApprovalConfidence float64                    `json:"approval_confidence"`
	Requests           map[string]toolkit.Request `json:"requests"`
}

// QuoteRoundResult is every call the round made, in order, with its
// envelope (auditors find each under "envelope", as in CallToolResult).
type QuoteRoundResult struct {
	Calls []RoundCall `json:"calls"`
}

// RoundCall is one tool call of a quote round. InputSHA256 is the hex
// SHA-256 of the exact JSON input the tool was given: the workflow takes
// the call's answer only for the input it would have sent itself.
type RoundCall struct {
	Step        string           `json:"step"`
	Tool        string           `json:"tool"`
	InputSHA256 string           `json:"input_sha256"`
	Envelope    toolkit.Response `json:"envelope"`
}

// InputSHA256 is the hex SHA-256 of a tool input as JSON.
func InputSHA256(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// PrefetchSHA256 is RoundCall.InputSHA256 of args (raw is its JSON): the
// input's SHA-256, where a total's is taken without the evidence refs it
// is sealed with. The refs are the snapshot ids of the same round's own
// answers, so they match whenever the rest does; the rounds of the
// captured histories are hashed without them (docs/quote-seals.md#the-seal).
func PrefetchSHA256(args any, raw []byte) string {
	if a, ok := args.(commerce.ComputeTotalArgs); ok && a.Evidence != nil {
		a.Evidence = nil
		if b, err := json.Marshal(a); err == nil {
			return InputSHA256(b)
		}
	}
	return InputSHA256(raw)
}

// QuoteRound makes a draft order's first quote round in one local
// activity (docs/performance.md#quote-round): pricing and shipping, then
// compliance for the chosen option's transport mode, then duties and the
// total, each through the invoker with its own evidence snapshot, and the
// catalogue read once for the three tools that need it. It stops where
// the workflow would stop calling tools (a refusal, a block, a verdict
// that needs support staff). The snapshots are written together in one
// round trip when the evidence store can stage them; a step that already
// has one (the activity ran before, its workflow task lost) makes the
// calls again one by one, so each answers what its evidence holds.
//
// A failure worth retrying fails the activity: the workflow then makes
// the round's calls itself, each with its retry policy.
func (a *Tools) QuoteRound(ctx context.Context, in QuoteRoundInput) (QuoteRoundResult, error) {
	ctx = commerce.WithCatalogMemo(ctx)
	batch := a.Invoker.NewBatch()
	res, err := RunQuoteRound(ctx, in, a.callIn(batch))
	if err != nil {
		return QuoteRoundResult{}, err
	}
	err = a.Invoker.CommitBatch(ctx, batch)
	if errors.Is(err, toolkit.ErrStepRecorded) {
		return RunQuoteRound(ctx, in, a.callIn(nil))
	}
	if err != nil {
		return QuoteRoundResult{}, ApplicationError(err)
	}
	return res, nil
}

// callIn makes a quote round's calls through the invoker, their
// snapshots staged in batch (nil: each written at once).
func (a *Tools) callIn(batch *toolkit.Batch) RoundCaller {
	return func(ctx context.Context, tool string, req toolkit.Request, input json.RawMessage) (toolkit.Response, error) {
		return CallIn(ctx, a.Invoker, batch, tool, req, input)
	}
}

// RoundCaller makes one tool call of a quote round and answers as Call
// does: the envelope of any answer, or the error of a failure worth
// retrying.
type RoundCaller func(ctx context.Context, tool string, req toolkit.Request, input json.RawMessage) (toolkit.Response, error)

// RunQuoteRound makes a quote round's calls through call; QuoteRound runs
// it on the invoker, and workflow tests on their fakes.
func RunQuoteRound(ctx context.Context, in QuoteRoundInput, call RoundCaller) (QuoteRoundResult, error) {
	r := &round{ctx: ctx, exec: call, in: in}
	var plan commerce.OriginPlan
	if !r.call(StepOrigins, commerce.ToolChooseOrigins, commerce.ChooseOriginsArgs{Items: in.Items, Destination: in.ShipTo,
		Currency: in.Currency, ShippingService: in.ShippingService, Incoterm: in.Incoterm}, &plan) || len(plan.Parcels) == 0 {
		return r.result()
	}
	if plan.Split {
		return runSplitRound(r, plan)
	}
	shipFrom := plan.Parcels[0].ShipFrom
	var quote commerce.Quote
	var ship commerce.ShippingQuote
	pok := r.call(StepPricing, commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: in.Items, Currency: in.Currency, ShipFrom: shipFrom}, &quote)
	sok := r.call(StepShipping, commerce.ToolQuoteShipping,
		commerce.QuoteShippingArgs{Items: in.Items, Destination: in.ShipTo, Currency: in.Currency, ShipFrom: shipFrom}, &ship)
	if r.err != nil || !pok || !sok {
		return r.result()
	}
	i := commerce.ChooseOption(ship.Options, in.ShippingService)
	if i < 0 {
		return r.result()
	}
	option := ship.Options[i]
	if !r.cleared(option.TransportMode) {
		return r.result()
	}
	var duties commerce.DutiesAndTaxes
	if !r.call(StepDuties, commerce.ToolDutiesAndTaxes, commerce.DutiesAndTaxesArgs{Lines: quote.Lines, Shipping: option,
		Destination: in.ShipTo, Currency: in.Currency, Incoterm: in.Incoterm}, &duties) {
		return r.result()
	}
	shipExp := ship.ExpiresAt
	args := commerce.ComputeTotalArgs{Quote: quote, Shipping: option, Duties: duties, ShippingExpiresAt: &shipExp}
	// Sealed with the evidence it rests on, as the workflow asks it
	// (docs/quote-seals.md#the-seal).
	args.Evidence = r.refs()
	r.call(StepTotal, commerce.ToolComputeTotal, args, nil)
	return r.result()
}

// runSplitRound is the rest of a round whose origin choice split the
// basket, as the workflow makes it (workflows/draftorder/draftorder_origin.go):
// pricing with each line at its parcel's warehouse, compliance for the
// parcels' strictest transport mode, and the total over the parcels.
func runSplitRound(r *round, plan commerce.OriginPlan) (QuoteRoundResult, error) {
	in := r.in
	items := make([]commerce.LineItem, len(in.Items))
	for i, it := range in.Items {
		items[i] = commerce.LineItem{SKU: it.SKU, Quantity: it.Quantity, ShipFrom: plan.ShipFromOf(it.SKU)}
	}
	var quote commerce.Quote
	if !r.call(StepPricing, commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: items, Currency: in.Currency}, &quote) {
		return r.result()
	}
	mode := plan.Parcels[0].Shipping.TransportMode
	for _, p := range plan.Parcels {
		if p.Shipping.TransportMode == "air" {
			mode = "air"
		}
	}
	if !r.cleared(mode) {
		return r.result()
	}
	exp := plan.ExpiresAt
	r.call(StepTotal, commerce.ToolComputeTotal, commerce.ComputeTotalArgs{Quote: quote, Parcels: plan.Parcels,
		ShippingExpiresAt: &exp, Evidence: r.refs()}, nil)
	return r.result()
}

// cleared checks compliance for mode and reports whether the round goes
// on: not after a refusal, a block, or a verdict support staff must
// clear (the workflow ends or asks them first).
func (r *round) cleared(mode string) bool {
	var verdict commerce.ComplianceVerdict
	if !r.call(StepCompliance, commerce.ToolCheckCompliance,
		commerce.CheckComplianceArgs{Items: r.in.Items, Destination: r.in.ShipTo, TransportMode: mode}, &verdict) {
		return false
	}
	return verdict.Verdict != commerce.VerdictBlock && !verdict.NeedsApproval(r.in.ApprovalConfidence)
}

// refs are the snapshots a round's total is sealed with.
func (r *round) refs() *commerce.EvidenceRefs {
	return &commerce.EvidenceRefs{PricingSnapshotID: r.snapshotOf(StepPricing),
		ComplianceSnapshotID: r.snapshotOf(StepCompliance), OriginsSnapshotID: r.snapshotOf(StepOrigins)}
}

// round is one QuoteRound's calls so far.
type round struct {
	ctx   context.Context
	exec  RoundCaller
	in    QuoteRoundInput
	calls []RoundCall
	err   error
}

// call makes one step's call and decodes its data into out (nil: the
// round needs nothing of it); ok is false for a refusal, an undecodable
// answer, or a failure (kept in r.err).
func (r *round) call(step, tool string, args any, out any) bool {
	if r.err != nil {
		return false
	}
	raw, err := json.Marshal(args)
	if err != nil {
		r.err = ApplicationError(toolkit.Errorf(toolkit.InvalidArgument, "input of %s is not JSON: %v", tool, err))
		return false
	}
	env, err := r.exec(r.ctx, tool, r.in.Requests[step], json.RawMessage(raw))
	if err != nil {
		r.err = err
		return false
	}
	r.calls = append(r.calls, RoundCall{Step: step, Tool: tool, InputSHA256: PrefetchSHA256(args, raw), Envelope: env})
	return env.OK && (out == nil || env.Decode(out) == nil)
}

// snapshotOf is the evidence snapshot id of step's answer in this round.
func (r *round) snapshotOf(step string) string {
	for _, c := range r.calls {
		if c.Step == step {
			return c.Envelope.SnapshotID()
		}
	}
	return ""
}

func (r *round) result() (QuoteRoundResult, error) {
	if r.err != nil {
		return QuoteRoundResult{}, r.err
	}
	return QuoteRoundResult{Calls: r.calls}, nil
}
