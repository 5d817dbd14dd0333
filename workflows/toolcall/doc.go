// Package toolcall is the generic tool call workflow — one tool, run durably
// under its idempotency key, answered as an envelope whatever happened
// (docs/envelope.md#idempotency) — and ListTools, the worker's catalogue.
package toolcall
