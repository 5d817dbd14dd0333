// Package flow is the machinery the flows share: a tool call from workflow
// code, in the worker (Steps, LocalFirst) or as the regular tool activity
// (CallTool) — the two ways and their one retry story are in in_worker.go —,
// request envelopes and correlation ids, and outliving an outage
// (docs/errors.md#outages).
package flow
