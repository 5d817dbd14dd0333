// Package shipping quotes parcel delivery from cartwright's single EU
// fulfilment warehouse in Germany: zones by destination country, weight
// bands, dimensional weight (L×W×H cm / 5000), and economy, standard and
// express services with a cost per band per zone in EUR and a delivery
// estimate in business days.
//
// The rate card is data (data/rates.json) with a ruleset version and the
// public price lists it was calibrated against. Costs are in EUR minor
// units; the tool converts them to the order currency with its FX table.
package shipping
