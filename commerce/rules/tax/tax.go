package tax

import (
	"errors"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// Incoterm says who pays duties and import taxes.
type Incoterm string

// Incoterms understood by Estimate.
const (
	// DDP (delivered duty paid): the seller charges duty and tax at checkout
	// and pays them at import.
	DDP Incoterm = "DDP"
	// DAP (delivered at place): duty and border taxes are estimated and
	// paid by the recipient on delivery.
	DAP Incoterm = "DAP"
)

// Collection is where an amount is paid.
type Collection string

// Collection points.
const (
	AtCheckout Collection = "checkout"
	AtBorder   Collection = "border"
)

// Regimes of an estimate.
const (
	RegimeDomestic = "domestic" // ships within the destination country
	RegimeIntraEU  = "intra_eu" // EU to EU: no customs, destination VAT via OSS
	RegimeImport   = "import"   // crosses a customs border
)

// Channel is how an import is declared: by mail (postal) or by a
// commercial carrier (courier).
type Channel string

// Channels of Input.Channel.
const (
	ChannelPostal  Channel = "postal"
	ChannelCourier Channel = "courier"
)

// DefaultShipFrom is cartwright's warehouse country (see package
// shipping), used when Input.ShipFrom is empty.
const DefaultShipFrom = "DE"

// Destination is where the goods are delivered. Region is the US state or
// Canadian province code; it is required there because the tax depends on
// it.
type Destination struct {
	Country string `json:"country"`
	Region  string `json:"region,omitempty"`
	// PostalCode finds the local sales taxes of a US address
	// (commerce/rules/README.md#us-sales-tax).
	PostalCode string `json:"postal_code,omitempty"`
}

// Line is one order line.
type Line struct {
	SKU string `json:"sku"`
	// HSCode is the Harmonized System code (6-10 digits; dots ignored).
	// Its chapter (first two digits) picks the duty rate; HS 4901 (printed
	// books) gets the books VAT rate where one is recorded.
	HSCode string `json:"hs_code"`
	// OriginCountry (ISO alpha-2) decides free-trade preferences.
	OriginCountry string `json:"origin_country"`
	// CustomsValue is the value of the whole line (unit price × quantity)
	// in minor units of Input.Currency, excluding shipping.
	CustomsValue int64 `json:"customs_value"`
	// Quantity is the number of units in the line (≥ 1); per-item
	// thresholds compare CustomsValue / Quantity.
	Quantity int64 `json:"quantity"`
}

// ThresholdConverter converts amount (minor units of from) into minor
// units of to. Pass the pricing FX table's converter; nil uses the
// package's indicative table (see BuiltinConverter).
type ThresholdConverter func(amount int64, from, to string) (int64, error)

// Input is one estimate request.
type Input struct {
	Destination Destination `json:"destination"`
	// ShipFrom is the country the parcel leaves from; "" = DefaultShipFrom.
	ShipFrom string `json:"ship_from,omitempty"`
	// Channel is how the parcel is declared at the border: ChannelPostal
	// or ChannelCourier. Thresholds that need one (Canada's CUSMA courier
	// thresholds) apply only when it is given; "" gets the general ones.
	Channel Channel `json:"channel,omitempty"`
	// Currency is the order currency (ISO 4217) of every amount.
	Currency string `json:"currency"`
	Lines    []Line `json:"lines"`
	// Shipping is the shipping charge in minor units; it is spread over the
	// lines by value for CIF customs values and VAT bases.
	Shipping int64    `json:"shipping"`
	Incoterm Incoterm `json:"incoterm"`
	// At selects the rules in force (rates and thresholds are dated). Zero
	// means now (UTC). Pass a fixed time for reproducible answers.
	At time.Time `json:"at"`
	// Convert compares values with thresholds in their own currency.
	Convert ThresholdConverter `json:"-"`
}

// Component is one consumption tax of the destination (GST and PST are
// two components in British Columbia).
type Component struct {
	Name   string     `json:"name"`
	Rate   money.Rate `json:"rate"`
	Amount int64      `json:"amount"`
}

// LineResult is the duty and tax of one line.
type LineResult struct {
	SKU     string `json:"sku"`
	HSCode  string `json:"hs_code"`
	Chapter string `json:"chapter"`
	// CustomsValue and ShippingShare (its part of Input.Shipping) add up to
	// the line's delivered value.
	CustomsValue  int64 `json:"customs_value"`
	ShippingShare int64 `json:"shipping_share"`
	// DutiableValue is what DutyRate applied to (goods, plus shipping in
	// CIF countries, times 60% for Japanese personal imports).
	DutiableValue int64      `json:"dutiable_value"`
	DutyRate      money.Rate `json:"duty_rate"`
	// DutyBasis: "no_import", "de_minimis", "flat_low_value",
	// "preferential", "chapter_rate" or "default_rate".
	DutyBasis string `json:"duty_basis"`
	// Preference names the free-trade agreement applied, if any.
	Preference      string     `json:"preference,omitempty"`
	Duty            int64      `json:"duty"`
	DutyCollectedAt Collection `json:"duty_collected_at,omitempty"`
	TaxBase         int64      `json:"tax_base"`
	// TaxRate is the sum of the components applied to this line.
	TaxRate        money.Rate `json:"tax_rate"`
	Tax            int64      `json:"tax"`
	TaxCollectedAt Collection `json:"tax_collected_at,omitempty"`
}

// Note explains an assumption or a rule that shaped the estimate. Codes
// are stable.
type Note struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result is the estimate.
type Result struct {
	Currency string   `json:"currency"`
	Incoterm Incoterm `json:"incoterm"`
	// Regime is domestic, intra_eu or import; Scheme names a low-value
	// scheme that applied (e.g. "IOSS").
	Regime string `json:"regime"`
	Scheme string `json:"scheme,omitempty"`
	// TaxName is what the destination calls its tax ("VAT", "GST",
	// "HST", "sales tax"); TaxRate the combined standard rate.
	TaxName string     `json:"tax_name"`
	TaxRate money.Rate `json:"tax_rate"`
	Duty    int64      `json:"duty"`
	Tax     int64      `json:"tax"`
	// Total = Duty + Tax = ChargedAtCheckout + PayableOnDelivery.
	Total             int64 `json:"total"`
	ChargedAtCheckout int64 `json:"charged_at_checkout"`
	PayableOnDelivery int64 `json:"payable_on_delivery"`
	// CollectedAt is "checkout" when nothing is left to pay on delivery,
	// else "border". DutyCollectedAt/TaxCollectedAt are empty when that
	// amount is zero, "border" if any part of it is paid at the border.
	CollectedAt     Collection `json:"collected_at"`
	DutyCollectedAt Collection `json:"duty_collected_at,omitempty"`
	TaxCollectedAt  Collection `json:"tax_collected_at,omitempty"`
	// DeMinimisApplied is true when a duty or tax threshold relieved the
	// order; the two flags say which.
	DeMinimisApplied     bool `json:"de_minimis_applied"`
	DutyDeMinimisApplied bool `json:"duty_de_minimis_applied"`
	TaxDeMinimisApplied  bool `json:"tax_de_minimis_applied"`

	Lines          []LineResult `json:"lines"`
	TaxComponents  []Component  `json:"tax_components"`
	RulesetVersion string       `json:"ruleset_version"`
	// FXSource is "caller" or "builtin" (the indicative table) when a
	// threshold comparison needed a conversion, else "".
	FXSource string `json:"fx_source,omitempty"`
	Notes    []Note `json:"notes"`
	// NotModelled names what the tax of this address depends on but the
	// data does not model (NotModelledLocalRate, NotModelledShipping):
	// the answer is the part that is modelled, and says so.
	NotModelled []string `json:"not_modelled,omitempty"`
}

// Errors of Estimate, checked with errors.Is.
var (
	ErrInvalidInput           = errors.New("tax: invalid input")
	ErrUnsupportedDestination = errors.New("tax: unsupported destination")
	ErrRegionRequired         = errors.New("tax: region required for this destination")
	ErrUnknownRegion          = errors.New("tax: unknown region")
	// ErrUnsupportedRegion: a real region (US territories, APO/FPO) whose
	// taxes are not modelled; refused rather than guessed.
	ErrUnsupportedRegion = errors.New("tax: region not supported")
	ErrNoRuleInForce     = errors.New("tax: no rule in force at that date")
)
