// Package compliance decides whether items may be shipped to a destination
// by a transport mode: embargoed and sanctioned destinations and regions,
// and restricted or prohibited product categories (lithium batteries,
// aerosols, flammable liquids, blades, alcohol, tobacco, vapes, CBD, arms,
// drones, magnets, food and plants) per destination and mode.
//
// The answer is a verdict (allow, block or uncertain) with a confidence in
// [0,1] and stable reason codes. Uncertain always has confidence below
// 0.80 and allow at least 0.80, so "uncertain or confidence < 0.80"
// (docs/approvals.md#confidence-threshold) is one test for the workflow. The
// rules are data (data/categories.json, data/destinations.json) with a ruleset
// version that goes into evidence.
//
// CheckDestination applies the destination-level rules alone, so tools can
// refuse a sanctioned destination before they look at the rest of its
// address.
//
// Not covered here: denied-party screening of the buyer (a list lookup
// against the names on the order) and classification of dual-use items;
// both belong to their own services.
package compliance
