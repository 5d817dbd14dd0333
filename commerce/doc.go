// Package commerce holds the six cross-border commerce tools
// (docs/tools.md#commerce-tools): pricing, shipping, duties and taxes,
// compliance, total and draft order, and the domain types their inputs and
// outputs share. The rules they apply live in commerce/rules; this package
// wires rules, catalog and storage into toolkit handlers.
package commerce
