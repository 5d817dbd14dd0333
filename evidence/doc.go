// Package evidence is the evidence store and the audit trail
// (docs/evidence.md): evidence snapshots of every tool call in a per-workflow
// hash chain, raw outputs only encrypted and read through one logged path,
// two-phase audit events for side-effecting tools, and the reconcile pass
// that closes stale audits and checks the audit ↔ evidence invariants.
package evidence
