// Package maintenance holds the scheduled workflows: Reconcile, which
// checks the evidence and draft-order invariants
// (docs/evidence.md#reconcile), and ArchiveHistories, which copies closed
// histories into the sealed archive before the server deletes them.
package maintenance
