package commerce

// Order is what a draft order orders — the one list of its fields: the
// workflow's input, its fingerprint, the MCP tool's arguments and the
// quote step all hold it, and the origin choice is asked from it.
type Order struct {
	// Items are the SKUs and quantities to order.
	Items []LineItem `json:"items"`
	// ShipTo is the destination address (PII: it stays in inputs and
	// tool calls, never in ids, search attributes or the status query).
	ShipTo Address `json:"ship_to"`
	// Currency to quote in; empty means the request's.
	Currency string `json:"currency,omitempty"`
	// ShippingService is economy, standard or express (default standard).
	ShippingService string `json:"shipping_service,omitempty"`
	// Incoterm is DDP (duty and tax collected at checkout, the default) or DAP.
	Incoterm string `json:"incoterm,omitempty"`
}

// OriginsArgs is the input of shipping.choose_origins for the order.
func (o Order) OriginsArgs() ChooseOriginsArgs {
	return ChooseOriginsArgs{Items: o.Items, Destination: o.ShipTo, Currency: o.Currency,
		ShippingService: o.ShippingService, Incoterm: o.Incoterm}
}
