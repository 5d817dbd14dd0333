// Package draftorder is the DraftOrder workflow: it prices a basket in
// one quote step (the origin choice, pricing, compliance for the parcels'
// transport mode and the total derived from them), asks support staff when compliance is uncertain, waits for the
// user to confirm the exact total and creates the draft order once per
// idempotency key (docs/envelope.md#idempotency, docs/quote-seals.md).
package draftorder
