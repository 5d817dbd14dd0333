// Package workflows is what cartwright's flows share with each other and
// with their callers: workflow ids (the idempotency key of a whole flow,
// docs/envelope.md#idempotency), start options, search attributes, the
// status query's name, evidence references, and strict signal decoding
// with the closed set of rejection reasons. Each flow has its own package
// below it — draftorder, onboardingflow, toolcall, maintenance (Reconcile,
// ArchiveHistories) — with approval, the support-staff wait two of them
// use; registry lists every workflow for the worker and the auditor, and
// internal/flow holds the tool-call machinery (docs/versioning.md: one
// path per flow, pinned to its build).
package workflows
