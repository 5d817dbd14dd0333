package commerce

import (
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/address"
)

// Money is an exact amount in the minor unit of its currency (cents for
// USD, yen for JPY, fils for KWD): never a float, so totals add up to the
// last unit and the hash of a total is stable.
type Money struct {
	// Amount is in minor units (e.g. 1999 = 19.99 USD, 1999 = ¥1,999).
	Amount int64 `json:"amount"`
	// Currency is the ISO 4217 code.
	Currency string `json:"currency"`
}

// Address is a postal address, defined beside the rules that validate it
// (commerce/rules/address). It is PII: tools validate it, use its country
// and postal code for rules, and never log or store it in clear.
type Address = address.Address

// LineItem is what the user wants: a catalog SKU and a quantity.
type LineItem struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
	// ShipFrom is the warehouse this line ships from, when a draft order's
	// origin choice split the basket (pricing checks its stock there);
	// only pricing.get_realtime_quote takes it.
	ShipFrom string `json:"ship_from,omitempty"`
}

// Dimensions of one packed unit, in millimetres.
type Dimensions struct {
	LengthMM int `json:"length_mm"`
	WidthMM  int `json:"width_mm"`
	HeightMM int `json:"height_mm"`
}

// QuoteLine is one priced line of a quote, with the product facts the
// shipping, duty and compliance rules need.
type QuoteLine struct {
	SKU      string `json:"sku"`
	Title    string `json:"title"`
	Quantity int    `json:"quantity"`
	// UnitPrice is in the quote's currency, converted from the catalog's
	// base price with the FX table named by Quote.FXVersion.
	UnitPrice Money `json:"unit_price"`
	// LineTotal is UnitPrice × Quantity, exactly.
	LineTotal Money `json:"line_total"`
	// HSCode is the 6-digit Harmonized System subheading.
	HSCode string `json:"hs_code"`
	// Origin is the ISO alpha-2 country of origin.
	Origin   string `json:"origin"`
	Category string `json:"category"`
	// WeightGrams is the packed weight of one unit.
	WeightGrams int        `json:"weight_grams"`
	Dims        Dimensions `json:"dims"`
	// ShipFrom is the warehouse whose stock was checked for this line,
	// when the line named one (a split basket).
	ShipFrom string `json:"ship_from,omitempty"`
}

// Quote is the answer of pricing.get_realtime_quote.
type Quote struct {
	QuoteID   string      `json:"quote_id"`
	Currency  string      `json:"currency"`
	Lines     []QuoteLine `json:"lines"`
	Subtotal  Money       `json:"subtotal"`
	ExpiresAt time.Time   `json:"expires_at"`
	// PriceHash is the canonical hash of what was priced (SKU, quantity,
	// unit price, currency per line). Two quotes with the same prices have
	// the same hash whatever their id or expiry, so a re-quote compares its
	// hash with the one the user saw (GetQuoteInput.ExpectedPriceHash).
	PriceHash string `json:"price_hash"`
	// FXVersion names the exchange-rate table used (goes into evidence).
	FXVersion string `json:"fx_version"`
	// FXRates says where the rates came from (the ECB feed or the
	// fallback table) and their reference date (docs/tools.md#exchange-rates).
	FXRates *FXRates `json:"fx_rates,omitempty"`
	// ShipFrom is the warehouse whose stock the quote checked.
	ShipFrom string `json:"ship_from,omitempty"`
}

// Service levels of shipping.quote_options.
const (
	ServiceEconomy  = "economy"
	ServiceStandard = "standard"
	ServiceExpress  = "express"
)

// ShippingOption is one way to ship the whole order to the destination.
type ShippingOption struct {
	// OptionID identifies the option within its answer (e.g. "express").
	OptionID     string `json:"option_id"`
	ServiceLevel string `json:"service_level"`
	Carrier      string `json:"carrier"`
	Cost         Money  `json:"cost"`
	// MinDays and MaxDays are the delivery estimate in business days.
	MinDays int `json:"min_days"`
	MaxDays int `json:"max_days"`
	// ChargeableGrams is max(actual, dimensional) weight of the parcel.
	ChargeableGrams int    `json:"chargeable_grams"`
	Zone            string `json:"zone"`
	// TransportMode is "air" or "ground"; compliance rules depend on it.
	TransportMode string `json:"transport_mode"`
	// ShipFrom is the warehouse the option ships from; duties follow it
	// ("" is DefaultWarehouse).
	ShipFrom string `json:"ship_from,omitempty"`
}

// ShippingQuote is the answer of shipping.quote_options.
type ShippingQuote struct {
	Options        []ShippingOption `json:"options"`
	ExpiresAt      time.Time        `json:"expires_at"`
	RulesetVersion string           `json:"ruleset_version"`
	// ShipFrom is the warehouse every option ships from.
	ShipFrom string `json:"ship_from,omitempty"`
}

// Incoterms the duty tool understands: DDP (seller collects duty and tax at
// checkout) and DAP (the buyer pays them on delivery).
const (
	IncotermDDP = "DDP"
	IncotermDAP = "DAP"
)

// DutyLine is the duty and tax of one quote line.
type DutyLine struct {
	SKU string `json:"sku"`
	// DutyRateBPS is the duty rate in basis points (1/100 of a percent).
	DutyRateBPS int `json:"duty_rate_bps"`
	// DutyBasis says why: no_import, de_minimis, flat_low_value,
	// preferential, chapter_rate or default_rate.
	DutyBasis string `json:"duty_basis,omitempty"`
	Duty      Money  `json:"duty"`
	// TaxRateBPS is the consumption-tax rate applied to this line.
	TaxRateBPS int   `json:"tax_rate_bps"`
	Tax        Money `json:"tax"`
}

// DutiesAndTaxes is the answer of tax.estimate_duties_and_taxes.
type DutiesAndTaxes struct {
	// Country and Region are the destination the estimate is for;
	// ShipFrom the origin (warehouse) it assumed.
	ShipFrom string     `json:"ship_from,omitempty"`
	Country  string     `json:"country"`
	Region   string     `json:"region,omitempty"`
	Currency string     `json:"currency"`
	Incoterm string     `json:"incoterm"`
	Lines    []DutyLine `json:"lines"`
	Duty     Money      `json:"duty"`
	Tax      Money      `json:"tax"`
	// TaxName is what the destination calls it: VAT, GST, HST, sales tax.
	TaxName string `json:"tax_name"`
	// TaxRateBPS is the headline rate applied, in basis points.
	TaxRateBPS int `json:"tax_rate_bps"`
	// DutyDeMinimis / TaxDeMinimis: true when the consignment is under the
	// destination's threshold and that charge is therefore zero.
	DutyDeMinimis bool `json:"duty_de_minimis"`
	TaxDeMinimis  bool `json:"tax_de_minimis"`
	// CollectedAtCheckout is true when nothing is left to pay on delivery.
	CollectedAtCheckout bool `json:"collected_at_checkout"`
	// ChargedAtCheckout + PayableOnDelivery = Duty + Tax. DDP charges all
	// at checkout; DAP leaves the border's part to the recipient, but a
	// low-value scheme's tax (EU IOSS, UK ≤ £135, AU/NZ GST) is charged at
	// checkout whatever the incoterm.
	ChargedAtCheckout Money `json:"charged_at_checkout"`
	PayableOnDelivery Money `json:"payable_on_delivery"`
	// Regime is domestic, intra_eu or import; Scheme names a low-value
	// scheme that applied (e.g. "IOSS").
	Regime string `json:"regime"`
	Scheme string `json:"scheme,omitempty"`
	// NotModelled names what the tax of this address depends on but the
	// rule data does not model (a US locality's rate, a state's taxing of
	// shipping): the amounts leave it out, the envelope is degraded with
	// WarnTaxNotModelled (commerce/rules/README.md#us-sales-tax).
	NotModelled []string `json:"not_modelled,omitempty"`
	// Notes explain assumptions and rules that shaped the estimate, each
	// "CODE: message".
	Notes          []string `json:"notes"`
	RulesetVersion string   `json:"ruleset_version"`
}

// Compliance verdicts. Uncertain is a normal answer that the workflow
// routes to support staff; block is also returned as COMPLIANCE_BLOCKED.
const (
	VerdictAllow     = "allow"
	VerdictBlock     = "block"
	VerdictUncertain = "uncertain"
)

// ComplianceReason explains one rule that fired.
type ComplianceReason struct {
	// Code is a stable rule identifier (e.g. "DG_LITHIUM_ION_STANDALONE_AIR").
	Code    string `json:"code"`
	SKU     string `json:"sku,omitempty"`
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	// Source is the public reference the rule rests on, when it has one;
	// support staff see it beside the rule (docs/approvals.md).
	Source string `json:"source,omitempty"`
}

// ComplianceVerdict is the answer of compliance.check_item for the whole
// basket: the strictest item verdict wins, confidence is the lowest.
type ComplianceVerdict struct {
	Verdict    string             `json:"verdict"`
	Confidence float64            `json:"confidence"`
	Reasons    []ComplianceReason `json:"reasons"`
	// Requirements are conditions of an allow the order must meet
	// ("age_verification_18", "dg_limited_quantity", ...).
	Requirements []string `json:"requirements"`
	// TransportMode is the mode the verdict holds for (air unless asked).
	TransportMode  string `json:"transport_mode"`
	RulesetVersion string `json:"ruleset_version"`
	// Items and Destination are the basket and destination the verdict
	// is for: checkout.compute_total checks them against the order it
	// totals (docs/quote-seals.md#what-a-total-is-derived-from).
	Items       []LineItem          `json:"items,omitempty"`
	Destination *VerdictDestination `json:"destination,omitempty"`
	// ReviewRoles are the staff roles that may clear a verdict that needs
	// a person: the approval asks for them, and the total accepts an
	// approval only from one of them (docs/approvals.md#sealed-decisions).
	ReviewRoles []string `json:"review_roles,omitempty"`
}

// VerdictDestination is where a compliance verdict holds: the country and
// region, never the address.
type VerdictDestination struct {
	Country string `json:"country"`
	Region  string `json:"region,omitempty"`
}

// NeedsApproval reports whether support staff must clear the verdict
// before the order goes on: uncertain, or confident below threshold (the
// order's approval_confidence, docs/approvals.md#confidence-threshold).
// The draft-order workflow and its quote step both ask it.
func (v ComplianceVerdict) NeedsApproval(threshold float64) bool {
	return v.Verdict == VerdictUncertain || v.Confidence < threshold
}

// TotalLine is one line of the total's breakdown.
type TotalLine struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitPrice Money  `json:"unit_price"`
	LineTotal Money  `json:"line_total"`
}

// Total is the answer of checkout.compute_total: what the user confirms.
type Total struct {
	QuoteID  string      `json:"quote_id" hash:"-"`
	Currency string      `json:"currency"`
	Lines    []TotalLine `json:"lines"`
	Subtotal Money       `json:"subtotal"`
	Shipping Money       `json:"shipping"`
	// ShippingOptionID is the chosen option.
	ShippingOptionID string `json:"shipping_option_id"`
	Duty             Money  `json:"duty"`
	Tax              Money  `json:"tax"`
	Incoterm         string `json:"incoterm"`
	// ShipToCountry and ShipToRegion are the destination duty and tax were
	// computed for; the draft order's address must match them.
	ShipToCountry string `json:"ship_to_country"`
	ShipToRegion  string `json:"ship_to_region,omitempty"`
	// ShipFrom is the warehouse the order ships from (quote, shipping and
	// duties agree on it). It is not hashed: what it changes is charged
	// (shipping, duty, tax are hashed), and hashes confirmed before
	// warehouses existed must still match.
	ShipFrom string `json:"ship_from,omitempty" hash:"-"`
	// Parcels are the parcels of a basket split between warehouses, each
	// with its own shipping, duty and tax (their sums are the total's);
	// empty when one warehouse ships everything. Hashed when present
	// (QuoteHash): the user confirms where each parcel comes from.
	Parcels []TotalParcel `json:"parcels,omitempty" hash:"-"`
	// GrandTotal is what is charged at checkout: subtotal + shipping, plus
	// duty and tax when the estimate says they are collected at checkout
	// (DDP, or a seller-collected sales tax); otherwise they are due on
	// delivery.
	GrandTotal Money `json:"grand_total"`
	// DueOnDelivery is the duty and tax the buyer pays the carrier.
	DueOnDelivery Money `json:"due_on_delivery"`
	// ExpiresAt is the earliest expiry of the quotes the total rests on.
	ExpiresAt time.Time `json:"expires_at" hash:"-"`
	// QuoteHash is QuoteHash(the total): the canonical hash of the priced
	// content (every field not tagged hash:"-"), the value the user confirms
	// and checkout.create_draft_order requires.
	QuoteHash string `json:"quote_hash" hash:"-"`
	// Evidence is what the total rests on, sealed by the server
	// (docs/quote-seals.md#the-seal); outside the quote_hash: the user
	// confirms prices, not seals. Set only when the draft-order workflow
	// handed compute_total its evidence.
	Evidence *TotalEvidence `json:"evidence,omitempty" hash:"-"`
	// FXRates are the exchange rates the quote was priced with (source and
	// reference date), so a status can say what the total assumed; outside
	// the quote_hash (the prices it converted are in it).
	FXRates *FXRates `json:"fx_rates,omitempty" hash:"-"`
	// TaxNotModelled is the duties answer's not_modelled: what the tax
	// depends on but the rules leave out (commerce/rules/README.md#us-sales-tax).
	TaxNotModelled []string `json:"tax_not_modelled,omitempty" hash:"-"`
}

// TotalEvidence names the evidence snapshots a total rests on and seals
// them together with it (docs/quote-seals.md#the-seal).
type TotalEvidence struct {
	EvidenceRefs
	IssuedAt time.Time `json:"issued_at"`
	// Seal is qs1.<key id>.<base64url HMAC-SHA256>.
	Seal string `json:"seal"`
}

// EvidenceRefs are the snapshot ids of the calls a total rests on, in the
// same workflow: the pricing call, the compliance call, and the support
// staff's approval when compliance needed one ("" otherwise).
type EvidenceRefs struct {
	PricingSnapshotID    string `json:"pricing_snapshot_id"`
	ComplianceSnapshotID string `json:"compliance_snapshot_id"`
	ApprovalSnapshotID   string `json:"approval_snapshot_id"`
	// OriginsSnapshotID is the shipping.choose_origins call that chose the
	// warehouses ("" for an order that did not choose: it ships from DE).
	OriginsSnapshotID string `json:"origins_snapshot_id,omitempty"`
}

// Draft order statuses: a dry run answers "validated" and writes nothing.
const (
	DraftStatusOpen      = "open"
	DraftStatusValidated = "validated"
)

// DraftOrder is the answer of checkout.create_draft_order.
type DraftOrder struct {
	// DraftOrderID is "do_" + 26 Crockford base32 characters; empty on a
	// dry run.
	DraftOrderID string    `json:"draft_order_id"`
	ExpiresAt    time.Time `json:"expires_at"`
	Status       string    `json:"status"`
	QuoteHash    string    `json:"quote_hash"`
	GrandTotal   Money     `json:"grand_total"`
	// Replayed is true when the idempotency key had already created this
	// draft order and the same one is returned.
	Replayed bool `json:"replayed"`
}
