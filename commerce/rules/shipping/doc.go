// Package shipping quotes parcel delivery from cartwright's warehouses
// (Germany, the default; the United States; the United Kingdom): zones by
// destination country per origin, weight bands, dimensional weight
// (L×W×H cm / 5000), and economy, standard and express services with a
// cost per band per zone and a delivery estimate in business days.
//
// Each warehouse's rate card is data (data/rates.json for DE,
// data/rates_us.json, data/rates_gb.json) sharing one ruleset version,
// with the public price lists it was calibrated against. Costs are in
// minor units of the card's currency (EUR, USD, GBP); the tool converts
// them to the order currency with its FX table.
package shipping
