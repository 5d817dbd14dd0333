// Package flow is the machinery the flows share: a tool call from workflow
// code (CallTool: the tool activity with the options of the tool's spec,
// local activities for a draft order's read-only tools; Answered for an
// answer the workflow already has), request envelopes and correlation
// ids, and outliving an outage (docs/errors.md#outages).
package flow
