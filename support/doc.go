// Package support is the support-staff side of human-in-the-loop decisions
// (docs/approvals.md): the staff roster in PostgreSQL and the tool
// support.record_approval, which checks an approver against the roster and
// records the decision. It runs through the toolkit invoker like every other
// tool, so each decision and its approver land in an evidence snapshot that an
// auditor can match against the workflow history.
package support
