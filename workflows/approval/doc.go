// Package approval is the support-staff approval wait a flow embeds
// (docs/approvals.md): the approval signal and decide_approval update,
// sealed decisions checked through support.record_approval, one window
// timer per request, and the refusals staff see.
package approval
