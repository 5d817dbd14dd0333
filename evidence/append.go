package evidence

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// appendSQL calls evidence_append_row (migration 00190): lock the chain,
// return the step's row if it has one, else insert the row after the
// chain's last one and move the chain head. One statement outside a
// transaction block is one round trip and its own transaction, which holds
// the advisory lock until it commits (docs/evidence.md#hash-chain).
const appendSQL = `SELECT r_reused, r_snapshot_id, r_output, r_output_hash, r_status, r_ruleset_version, r_created_at,
	r_chain_seq, r_chain_hash
	FROM evidence_append_row(p_lock_class => $1, p_row => $2)`

// newRow is a staged row as the append functions take it (one jsonb
// argument, read with evidence_snapshots' own row type): the record's
// columns under their JSON names, which are the column names, plus what
// the record keeps out of its JSON. The content hash is complete (hash
// format 2); the chain columns the record also carries (chain_seq, the
// links, recorded_at) are the database's, and the functions never read
// them.
type newRow struct {
	*SnapshotRecord
	DedupeKey     string  `json:"dedupe_key"`
	RawCiphertext pgBytea `json:"raw_ciphertext"`
	RawNonce      pgBytea `json:"raw_nonce"`
	// RawKeyID is null without a raw output (the record omits it empty).
	RawKeyID *string `json:"raw_key_id"`
}

// pgBytea is a bytea column in JSON: PostgreSQL's hex form (\x…), the one
// its bytea input reads unambiguously; null for nil.
type pgBytea []byte

func (b pgBytea) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("null"), nil
	}
	return json.Marshal(`\x` + hex.EncodeToString(b))
}

// row is st's row as the append functions take it.
func (st *staged) row() newRow {
	r := st.r
	var keyID *string
	if r.HasRaw {
		keyID = &r.RawKeyID
	}
	return newRow{SnapshotRecord: r, DedupeKey: st.dedupeKey, RawCiphertext: r.rawCiphertext, RawNonce: r.rawNonce,
		RawKeyID: keyID}
}

// rowJSON is st's row encoded for one jsonb argument.
func (st *staged) rowJSON() ([]byte, error) {
	b, err := json.Marshal(st.row())
	if err != nil {
		return nil, fmt.Errorf("evidence: encode %s: %w", st.r.SnapshotID, err)
	}
	return b, nil
}

// append writes st's row at the end of its chain under a per-chain advisory
// lock, or returns the row the step already holds. When it wrote the row,
// st.r carries its chain position and chain hash on return.
func (s *Store) append(ctx context.Context, st *staged) (toolkit.Recorded, error) {
	row, err := st.rowJSON()
	if err != nil {
		return toolkit.Recorded{}, err
	}
	var rec toolkit.Recorded
	var output []byte
	var status, chainHash string
	var seq int64
	err = s.pool.QueryRow(ctx, appendSQL, lockClass, string(row)).
		Scan(&rec.Reused, &rec.SnapshotID, &output, &rec.OutputHash, &status, &rec.RulesetVersion, &rec.CreatedAt,
			&seq, &chainHash)
	if err != nil {
		return toolkit.Recorded{}, dbError("append snapshot", err)
	}
	r := st.r
	if !rec.Reused {
		r.ChainSeq, r.ChainHash = seq, chainHash
		s.own.add(r)
		return toolkit.Recorded{SnapshotID: r.SnapshotID, OutputHash: r.OutputHash}, nil
	}
	// The step's stored answer, which the invoker returns in place of the
	// one just computed (docs/evidence.md#one-snapshot-per-step).
	rec.Output, rec.Status, rec.CreatedAt = json.RawMessage(output), toolkit.Status(status), rec.CreatedAt.UTC()
	return rec, nil
}
