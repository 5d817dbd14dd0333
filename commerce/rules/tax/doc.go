// Package tax estimates import duties and consumption taxes (VAT, GST,
// HST/PST/QST, US state sales tax) for a cross-border order, the way the
// destination charges them:
//
//   - the consumption-tax rate of the destination (and its region for US
//     and CA), dated so rate changes apply from their effective date;
//   - the destination's import regime: duty and tax de minimis thresholds
//     in their own currency, low-value schemes where the seller must charge
//     the tax at checkout (EU IOSS, UK £135, AU/NZ LVG, SG OVR, NO VOEC),
//     and dated changes such as the US de minimis suspension of 2025-08-29
//     and the EU €3 flat duty from 2026-07-01;
//   - representative duty rates by HS chapter per destination tariff, with
//     free-trade-agreement preferences by country of origin;
//   - the incoterm: DDP charges everything at checkout, DAP leaves what the
//     border collects to the recipient (but checkout-scheme taxes are
//     charged at checkout whatever the incoterm).
//
// All amounts are int64 minor units of the order currency, rounded half-up
// per line and per tax component (package money). Rules are data in
// data/*.json, embedded, sharing one ruleset version that goes into
// evidence with every estimate.
package tax
