package activities

import (
	"context"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Commerce runs the six commerce tools (docs/tools.md#commerce-tools) as
// activities. worker/wiring registers it with the others; the
// activity type names are the method names (GetQuote, QuoteShipping, ...).
type Commerce struct {
	Invoker *toolkit.Invoker
}

// GetQuoteInput is the input of GetQuote (pricing.get_realtime_quote).
type GetQuoteInput struct {
	Request toolkit.Request       `json:"request"`
	Args    commerce.GetQuoteArgs `json:"args"`
}

// GetQuoteResult holds the quote and the envelope it came in.
type GetQuoteResult struct {
	Quote    commerce.Quote   `json:"quote"`
	Envelope toolkit.Response `json:"envelope"`
}

// GetQuote prices the items in the requested currency. Errors: NOT_FOUND
// (unknown SKU), OUT_OF_STOCK, PRICE_CHANGED (ExpectedPriceHash differs).
func (c *Commerce) GetQuote(ctx context.Context, in GetQuoteInput) (GetQuoteResult, error) {
	q, env, err := legacy[commerce.Quote](ctx, c.Invoker, commerce.ToolGetQuote, in.Request, in.Args)
	return GetQuoteResult{Quote: q, Envelope: env}, err
}

// QuoteShippingInput is the input of QuoteShipping (shipping.quote_options).
type QuoteShippingInput struct {
	Request toolkit.Request            `json:"request"`
	Args    commerce.QuoteShippingArgs `json:"args"`
}

// QuoteShippingResult holds the shipping options and the envelope.
type QuoteShippingResult struct {
	Shipping commerce.ShippingQuote `json:"shipping"`
	Envelope toolkit.Response       `json:"envelope"`
}

// QuoteShipping lists economy, standard and express options. Errors:
// ADDRESS_INVALID, NOT_FOUND (unknown SKU).
func (c *Commerce) QuoteShipping(ctx context.Context, in QuoteShippingInput) (QuoteShippingResult, error) {
	s, env, err := legacy[commerce.ShippingQuote](ctx, c.Invoker, commerce.ToolQuoteShipping, in.Request, in.Args)
	return QuoteShippingResult{Shipping: s, Envelope: env}, err
}

// EstimateDutiesAndTaxesInput is the input of EstimateDutiesAndTaxes
// (tax.estimate_duties_and_taxes).
type EstimateDutiesAndTaxesInput struct {
	Request toolkit.Request             `json:"request"`
	Args    commerce.DutiesAndTaxesArgs `json:"args"`
}

// EstimateDutiesAndTaxesResult holds duty and tax and the envelope.
type EstimateDutiesAndTaxesResult struct {
	Duties   commerce.DutiesAndTaxes `json:"duties"`
	Envelope toolkit.Response        `json:"envelope"`
}

// EstimateDutiesAndTaxes computes import duty and VAT/GST/sales tax.
// Errors: ADDRESS_INVALID, INVALID_ARGUMENT (mixed currencies).
func (c *Commerce) EstimateDutiesAndTaxes(ctx context.Context, in EstimateDutiesAndTaxesInput) (EstimateDutiesAndTaxesResult, error) {
	d, env, err := legacy[commerce.DutiesAndTaxes](ctx, c.Invoker, commerce.ToolDutiesAndTaxes, in.Request, in.Args)
	return EstimateDutiesAndTaxesResult{Duties: d, Envelope: env}, err
}

// CheckComplianceInput is the input of CheckCompliance (compliance.check_item).
type CheckComplianceInput struct {
	Request toolkit.Request              `json:"request"`
	Args    commerce.CheckComplianceArgs `json:"args"`
}

// CheckComplianceResult holds the verdict (allow or uncertain; a block is
// the COMPLIANCE_BLOCKED error) and the envelope.
type CheckComplianceResult struct {
	Verdict  commerce.ComplianceVerdict `json:"verdict"`
	Envelope toolkit.Response           `json:"envelope"`
}

// CheckCompliance checks the basket against the destination's rules.
// Errors: COMPLIANCE_BLOCKED (details.verdict holds the verdict),
// ADDRESS_INVALID, NOT_FOUND.
func (c *Commerce) CheckCompliance(ctx context.Context, in CheckComplianceInput) (CheckComplianceResult, error) {
	v, env, err := legacy[commerce.ComplianceVerdict](ctx, c.Invoker, commerce.ToolCheckCompliance, in.Request, in.Args)
	return CheckComplianceResult{Verdict: v, Envelope: env}, err
}

// ComputeTotalInput is the input of ComputeTotal (checkout.compute_total).
type ComputeTotalInput struct {
	Request toolkit.Request           `json:"request"`
	Args    commerce.ComputeTotalArgs `json:"args"`
}

// ComputeTotalResult holds the total with its quote_hash and the envelope.
type ComputeTotalResult struct {
	Total    commerce.Total   `json:"total"`
	Envelope toolkit.Response `json:"envelope"`
}

// ComputeTotal adds lines, shipping, duty and tax exactly in minor units.
// Errors: INVALID_ARGUMENT (mixed currencies, inconsistent lines).
func (c *Commerce) ComputeTotal(ctx context.Context, in ComputeTotalInput) (ComputeTotalResult, error) {
	t, env, err := legacy[commerce.Total](ctx, c.Invoker, commerce.ToolComputeTotal, in.Request, in.Args)
	return ComputeTotalResult{Total: t, Envelope: env}, err
}

// CreateDraftOrderInput is the input of CreateDraftOrder
// (checkout.create_draft_order). Request.IdempotencyKey is required.
type CreateDraftOrderInput struct {
	Request toolkit.Request               `json:"request"`
	Args    commerce.CreateDraftOrderArgs `json:"args"`
}

// CreateDraftOrderResult holds the draft order and the envelope.
type CreateDraftOrderResult struct {
	DraftOrder commerce.DraftOrder `json:"draft_order"`
	Envelope   toolkit.Response    `json:"envelope"`
}

// CreateDraftOrder writes the draft order exactly once per (user_id,
// tool, idempotency_key). Errors: NEEDS_USER_CONFIRMATION (hash not
// confirmed or total expired), CONFLICT (key reused for another total),
// ADDRESS_INVALID, UPSTREAM_ERROR (audit or database unavailable; retried).
func (c *Commerce) CreateDraftOrder(ctx context.Context, in CreateDraftOrderInput) (CreateDraftOrderResult, error) {
	d, env, err := legacy[commerce.DraftOrder](ctx, c.Invoker, commerce.ToolCreateDraftOrder, in.Request, in.Args)
	return CreateDraftOrderResult{DraftOrder: d, Envelope: env}, err
}
