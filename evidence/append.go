package evidence

import (
	"context"
	"encoding/json"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// appendSQL calls evidence_append (migration 00080): lock the chain, return
// the step's row if it has one, else insert r after the chain's last row and
// move the chain head. One statement outside a transaction block is one
// round trip and its own transaction, which holds the advisory lock until
// it commits (docs/evidence.md#hash-chain).
const appendSQL = `SELECT r_reused, r_snapshot_id, r_output, r_output_hash, r_status, r_ruleset_version, r_created_at,
	r_chain_seq, r_content_hash, r_chain_hash
	FROM evidence_append($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28)`

// append writes st's row at the end of its chain under a per-chain advisory
// lock, or returns the row the step already holds. The database finishes
// the row's content and chain hashes (contentHashParts); when it wrote the
// row, st.r carries its chain position and hashes on return.
func (s *Store) append(ctx context.Context, st *staged) (toolkit.Recorded, error) {
	r := st.r
	var keyID *string
	if r.HasRaw {
		keyID = &r.RawKeyID
	}
	var rec toolkit.Recorded
	var output []byte
	var status, contentHash, chainHash string
	var seq int64
	err := s.pool.QueryRow(ctx, appendSQL, lockClass, r.SnapshotID, st.dedupeKey, r.ChainKey, r.Tool, r.ToolVersion,
		r.Build, r.WorkflowID, r.RunID, r.ActivityID, r.ActivityType, r.Attempt, r.RequestID, r.CorrelationID,
		r.UserIDHash, r.InputDigest, string(r.Output), r.OutputHash, r.rawCiphertext, r.rawNonce, keyID,
		r.RulesetVersion, r.TTLSeconds, r.Status, r.CreatedAt, r.TraceID, st.head, st.tail).
		Scan(&rec.Reused, &rec.SnapshotID, &output, &rec.OutputHash, &status, &rec.RulesetVersion, &rec.CreatedAt,
			&seq, &contentHash, &chainHash)
	if err != nil {
		return toolkit.Recorded{}, dbError("append snapshot", err)
	}
	if !rec.Reused {
		r.ChainSeq, r.ContentHash, r.ChainHash = seq, contentHash, chainHash
		return toolkit.Recorded{SnapshotID: r.SnapshotID, OutputHash: r.OutputHash}, nil
	}
	// The step's stored answer, which the invoker returns in place of the
	// one just computed (docs/evidence.md#one-snapshot-per-step).
	rec.Output, rec.Status, rec.CreatedAt = json.RawMessage(output), toolkit.Status(status), rec.CreatedAt.UTC()
	return rec, nil
}
