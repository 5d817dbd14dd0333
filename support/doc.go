// Package support is the support-staff side of human-in-the-loop decisions
// (docs/approvals.md): the staff roster in PostgreSQL, the seal that makes
// the signed-in staff member a decision's author (SealRing,
// docs/approvals.md#sealed-decisions), and the tool
// support.record_approval, which verifies a decision's seal, checks the
// sealed approver against the roster and records the decision. It runs
// through the toolkit invoker like every other tool, so each decision, its
// approver and its seal land in an evidence snapshot that an auditor can
// match against the workflow history.
package support
