package commerce

// Tool names (docs/tools.md#tool-list). Activities, the workflow and the
// registry use these constants so a rename cannot split them.
const (
	ToolGetQuote         = "pricing.get_realtime_quote"
	ToolQuoteShipping    = "shipping.quote_options"
	ToolDutiesAndTaxes   = "tax.estimate_duties_and_taxes"
	ToolCheckCompliance  = "compliance.check_item"
	ToolComputeTotal     = "checkout.compute_total"
	ToolCreateDraftOrder = "checkout.create_draft_order"
)

// GetQuoteArgs is the input of pricing.get_realtime_quote
// (schemas/pricing.get_realtime_quote.input.json).
type GetQuoteArgs struct {
	Items []LineItem `json:"items"`
	// Currency is the ISO 4217 currency to quote in.
	Currency string `json:"currency"`
	// ExpectedPriceHash is Quote.PriceHash of the quote the user saw; when
	// set and the re-quote's prices differ the tool answers PRICE_CHANGED
	// (details carry the new price_hash and lines).
	ExpectedPriceHash string `json:"expected_price_hash,omitempty"`
	// ShipFrom is the warehouse whose stock is checked (DE, US, GB);
	// "" is DefaultWarehouse.
	ShipFrom string `json:"ship_from,omitempty"`
}

// QuoteShippingArgs is the input of shipping.quote_options. Items are
// SKUs, not quote lines, so shipping can run in parallel with pricing: the
// tool reads weights and dimensions from the catalog itself.
type QuoteShippingArgs struct {
	Items       []LineItem `json:"items"`
	Destination Address    `json:"destination"`
	Currency    string     `json:"currency"`
	// ShipFrom is the warehouse the parcel leaves from (its rate card
	// applies); "" is DefaultWarehouse.
	ShipFrom string `json:"ship_from,omitempty"`
}

// DutiesAndTaxesArgs is the input of tax.estimate_duties_and_taxes: the
// priced lines of a quote and the chosen shipping option (shipping is part
// of the customs value and of the VAT base in most destinations). The
// option's ShipFrom is the origin the estimate follows.
type DutiesAndTaxesArgs struct {
	Lines       []QuoteLine    `json:"lines"`
	Shipping    ShippingOption `json:"shipping"`
	Destination Address        `json:"destination"`
	Currency    string         `json:"currency"`
	// Incoterm is DDP or DAP.
	Incoterm string `json:"incoterm"`
}

// CheckComplianceArgs is the input of compliance.check_item: the items of
// one basket (by SKU, attributes come from the catalog), the destination
// and the transport mode ("air" or "ground"; air is the strict default).
type CheckComplianceArgs struct {
	Items         []LineItem `json:"items"`
	Destination   Address    `json:"destination"`
	TransportMode string     `json:"transport_mode,omitempty"`
}

// ComputeTotalArgs is the input of checkout.compute_total: the snapshots
// of the caller's own workflow the total is derived from, and nothing
// else — no amount, rate or verdict (docs/quote-seals.md#what-a-total-is-derived-from).
type ComputeTotalArgs struct {
	EvidenceRefs
}

// CreateDraftOrderArgs is the input of checkout.create_draft_order. The
// request envelope must carry an idempotency_key; dry_run validates only.
type CreateDraftOrderArgs struct {
	Total Total `json:"total"`
	// ConfirmedQuoteHash is the Total.QuoteHash the user confirmed; it must
	// equal the hash recomputed from Total, else NEEDS_USER_CONFIRMATION.
	ConfirmedQuoteHash string  `json:"confirmed_quote_hash"`
	ShipTo             Address `json:"ship_to"`
}
