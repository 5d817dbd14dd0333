// Package workflows holds cartwright's durable workflows — DraftOrder,
// Onboarding, the generic ToolCall and ListTools, the scheduled Reconcile and
// ArchiveHistories — and the pieces they share: workflow ids (the idempotency
// key of a whole flow, docs/envelope.md#idempotency), search attributes, the
// support-staff approval wait (docs/approvals.md) and strict signal decoding.
package workflows
