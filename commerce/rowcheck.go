package commerce

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// DraftTotalCheck re-checks a stored draft row's total with the write's own
// checks (checkSeal, checkEvidence: docs/quote-seals.md#what-the-write-checks)
// against the snapshots its seal names, as they stood when the row was
// written: reconcile's draft_total_mismatch
// (docs/evidence.md#draft-row-signatures). Only rows the worker signed are
// checked (every one of them rests on a sealed total); a row's author is
// checked beside. It needs the quote-seal ring, so it runs where the seals
// are made: the worker's reconcile.
func DraftTotalCheck(seals *SealRing, snaps SnapshotReader) evidence.DraftTotalCheck {
	t := &tools{seals: seals, snaps: snaps}
	return func(ctx context.Context, row evidence.DraftRow) (string, error) {
		c := row.Content
		if row.Signature == "" || seals == nil {
			return "", nil
		}
		var total Total
		if err := json.Unmarshal(c.Total, &total); err != nil {
			return fmt.Sprintf("its total is not a total: %v", err), nil
		}
		if total.GrandTotal.Amount != c.GrandTotalMinor || total.Currency != c.Currency || total.QuoteHash != c.QuoteHash {
			return fmt.Sprintf("its columns (%d %s, %s) are not its total's (%d %s, %s)", c.GrandTotalMinor, c.Currency, c.QuoteHash,
				total.GrandTotal.Amount, total.Currency, total.QuoteHash), nil
		}
		ctx = toolkit.WithCall(ctx, toolkit.CallContext{WorkflowID: c.WorkflowID, RunID: c.RunID})
		err := t.checkSeal(ctx, total)
		if err == nil {
			err = t.checkEvidence(ctx, total, c.CreatedAt)
		}
		if err == nil {
			return "", nil
		}
		if toolkit.CodeOf(err) == toolkit.UpstreamError {
			return "", err // the evidence could not be read: the pass fails, nothing is claimed
		}
		return err.Error(), nil
	}
}
