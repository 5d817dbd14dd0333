package commerce

import "time"

// ToolChooseOrigins is the read-only step of a draft order that decides
// which warehouse ships what (docs/tools.md#origin-choice).
const ToolChooseOrigins = "shipping.choose_origins"

// ChooseOriginsArgs is the input of shipping.choose_origins: the basket,
// the destination, and the service and incoterm the order asks for (the
// landed cost depends on both).
type ChooseOriginsArgs struct {
	Items       []LineItem `json:"items"`
	Destination Address    `json:"destination"`
	Currency    string     `json:"currency"`
	// ShippingService is economy, standard or express.
	ShippingService string `json:"shipping_service"`
	// Incoterm is DDP or DAP.
	Incoterm string `json:"incoterm"`
}

// LandedCost is what the customer pays for a parcel or an order in the
// end, at checkout and on delivery together: goods + shipping + duty + tax.
type LandedCost struct {
	Goods    Money `json:"goods"`
	Shipping Money `json:"shipping"`
	Duty     Money `json:"duty"`
	Tax      Money `json:"tax"`
	Total    Money `json:"total"`
}

// StockShort is a line a warehouse cannot fill.
type StockShort struct {
	SKU       string `json:"sku"`
	Requested int    `json:"requested"`
	Available int    `json:"available"`
}

// Rejection reasons of an origin candidate (OriginCandidate.Rejected).
const (
	// RejectOutOfStock: the warehouse lacks at least one line.
	RejectOutOfStock = "out_of_stock"
	// RejectCannotShip: the warehouse cannot ship this basket to the
	// destination, or its duty estimate failed (Reason says why).
	RejectCannotShip = "cannot_ship"
	// RejectServiceNotOffered: another candidate offers the requested
	// service and this one does not.
	RejectServiceNotOffered = "service_not_offered"
	// RejectCostlier: its landed cost is higher than the chosen one's.
	RejectCostlier = "costlier"
	// RejectLaterDelivery: same landed cost, later delivery.
	RejectLaterDelivery = "later_delivery"
	// RejectTieBreak: same landed cost and delivery; the code decided.
	RejectTieBreak = "tie_break"
	// RejectFewerParcels: a plan with fewer parcels exists (splits only).
	RejectFewerParcels = "more_parcels"
)

// OriginRule is the documented decision rule a plan was made by
// (docs/tools.md#origin-choice).
const OriginRule = "fewest parcels (one warehouse when one can fill the basket); among those, one that offers the requested service; " +
	"then the lowest landed cost (goods + shipping + duty + tax); then the earliest delivery (max_days, then min_days); " +
	"then the warehouse codes in alphabetical order"

// ParcelQuote is one parcel of a plan: a warehouse, the lines it ships,
// the shipping option the order takes from it and the duty and tax
// estimate of that parcel, as shipping.quote_options and
// tax.estimate_duties_and_taxes answer them.
type ParcelQuote struct {
	ShipFrom string         `json:"ship_from"`
	Items    []LineItem     `json:"items"`
	Shipping ShippingOption `json:"shipping"`
	Duties   DutiesAndTaxes `json:"duties"`
	Landed   LandedCost     `json:"landed_cost"`
}

// OriginCandidate is one warehouse considered for the whole basket, or
// one way to split it (Origins lists the parcels' warehouses).
type OriginCandidate struct {
	// Origins are the warehouses of the candidate's parcels: one for a
	// single warehouse, two or more for a split.
	Origins []string `json:"origins"`
	// Fills: every line is in stock where the candidate ships it from.
	Fills bool         `json:"fills"`
	Short []StockShort `json:"short,omitempty"`
	// Parcels are the SKUs each origin ships (a split's assignment).
	Parcels [][]string `json:"parcels,omitempty"`
	// ServiceLevel is the service the order would take (the requested one
	// when offered); MeetsService says whether it is the requested one.
	ServiceLevel string      `json:"service_level,omitempty"`
	MeetsService bool        `json:"meets_service"`
	MinDays      int         `json:"min_days,omitempty"`
	MaxDays      int         `json:"max_days,omitempty"`
	Landed       *LandedCost `json:"landed_cost,omitempty"`
	Chosen       bool        `json:"chosen"`
	// Rejected is why it was not chosen (Reject* constants); Reason says
	// it for people, with the figures.
	Rejected string `json:"rejected,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// OriginPlan is the answer of shipping.choose_origins: the parcels the
// order ships as, and every candidate considered with why it lost.
type OriginPlan struct {
	Currency        string `json:"currency"`
	Destination     string `json:"destination"`
	ShippingService string `json:"shipping_service"`
	Incoterm        string `json:"incoterm"`
	// Rule is the decision rule (OriginRule).
	Rule  string `json:"rule"`
	Split bool   `json:"split"`
	// Parcels are the chosen parcels, in warehouse order.
	Parcels []ParcelQuote `json:"parcels"`
	// Landed is the sum over the parcels; MinDays/MaxDays the delivery of
	// the slowest parcel.
	Landed  LandedCost `json:"landed_cost"`
	MinDays int        `json:"min_days"`
	MaxDays int        `json:"max_days"`
	// Candidates are each warehouse alone, in code order; Splits the ways
	// to split the basket that were priced (only when no warehouse alone
	// can fill it).
	Candidates     []OriginCandidate `json:"candidates"`
	Splits         []OriginCandidate `json:"splits,omitempty"`
	ExpiresAt      time.Time         `json:"expires_at"`
	RulesetVersion string            `json:"ruleset_version"`
}

// Origins lists the chosen parcels' warehouses.
func (p OriginPlan) Origins() []string {
	out := make([]string, len(p.Parcels))
	for i, pq := range p.Parcels {
		out[i] = pq.ShipFrom
	}
	return out
}

// ShipFromOf is the warehouse that ships sku in the plan ("" if none).
func (p OriginPlan) ShipFromOf(sku string) string {
	for _, pq := range p.Parcels {
		for _, it := range pq.Items {
			if it.SKU == sku {
				return pq.ShipFrom
			}
		}
	}
	return ""
}

// TotalParcel is one parcel of a split total: its warehouse, lines and
// its own shipping, duty and tax (the total's are the sums).
type TotalParcel struct {
	ShipFrom         string     `json:"ship_from"`
	Items            []LineItem `json:"items"`
	Subtotal         Money      `json:"subtotal"`
	Shipping         Money      `json:"shipping"`
	ShippingOptionID string     `json:"shipping_option_id"`
	Duty             Money      `json:"duty"`
	Tax              Money      `json:"tax"`
	DueOnDelivery    Money      `json:"due_on_delivery"`
	MinDays          int        `json:"min_days"`
	MaxDays          int        `json:"max_days"`
}
