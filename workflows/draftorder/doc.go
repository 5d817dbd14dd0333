// Package draftorder is the DraftOrder workflow: it prices a basket (the
// quote round, compliance for the chosen transport mode, duties and the
// total), asks support staff when compliance is uncertain, waits for the
// user to confirm the exact total and creates the draft order once per
// idempotency key (docs/envelope.md#idempotency, docs/quote-seals.md).
package draftorder
