package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// DirectActivityType is the activity type of a snapshot written for a
// read-only call answered without a workflow (docs/evidence.md#direct-calls):
// its workflow, run and activity ids are empty, and its chain is its key's.
const DirectActivityType = "direct"

// DirectChainKey is the chain of a direct call: "direct:" and the hex
// SHA-256 of the caller's user id hash and the call's request id (a read
// tool's key). Two users' keys never share a chain, and the audit
// recomputes it from the snapshot's own columns.
func DirectChainKey(userIDHash, requestID string) string {
	sum := sha256.Sum256([]byte(userIDHash + "\x1f" + requestID))
	return "direct:" + hex.EncodeToString(sum[:])
}

// DirectAnswer is an answer kept under a direct call's key: the first
// request's fingerprint and the envelope it was given.
type DirectAnswer struct {
	Fingerprint string
	Envelope    toolkit.Response
}

// LookupDirect returns the answer kept under chainKey, if any: one
// round trip, before a keyed call runs its tool.
func (s *Store) LookupDirect(ctx context.Context, chainKey string) (DirectAnswer, bool, error) {
	var a DirectAnswer
	var env []byte
	err := s.pool.QueryRow(ctx, `SELECT fingerprint, envelope FROM evidence_direct_calls WHERE chain_key = $1`, chainKey).
		Scan(&a.Fingerprint, &env)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, dbError("look up a direct call", err)
	}
	if err := json.Unmarshal(env, &a.Envelope); err != nil {
		return a, false, fmt.Errorf("evidence: the envelope kept under %s: %w", chainKey, err)
	}
	return a, true, nil
}

// DirectCommit is what CommitDirect did.
type DirectCommit struct {
	// Kept is set when the key already held an answer (another call
	// with it finished first): nothing was written, and the caller
	// answers Kept (or CONFLICT when its fingerprint differs).
	Kept *DirectAnswer
	// SnapshotID is the snapshot of the call: the staged one, or when
	// Reused the row the step already held (a refusal not kept under the
	// key, made again with the same arguments).
	SnapshotID string
	Reused     bool
}

// appendDirectSQL calls evidence_append_direct_row (migration 00192).
const appendDirectSQL = `SELECT r_bound, r_fingerprint, r_envelope, r_reused, r_snapshot_id, r_chain_seq, r_chain_hash
	FROM evidence_append_direct_row(p_lock_class => $1, p_row => $2, p_fingerprint => $3, p_envelope => $4, p_keep => $5)`

// CommitDirect writes the one snapshot a direct call staged and, when keep,
// binds env to the call's key under fingerprint: one statement, so one
// round trip and one transaction (docs/evidence.md#direct-calls). env must
// name the staged snapshot. A transient database failure is a retryable
// UPSTREAM_ERROR.
func (s *Store) CommitDirect(ctx context.Context, step toolkit.Staged, fingerprint string, env toolkit.Response, keep bool) (DirectCommit, error) {
	st, ok := step.(*staged)
	if !ok || st.store != s {
		return DirectCommit{}, fmt.Errorf("evidence: commit of a step this store did not stage (%T)", step)
	}
	r := st.r
	if r.ActivityType != DirectActivityType || r.WorkflowID != "" {
		return DirectCommit{}, fmt.Errorf("evidence: %s is not a direct call's snapshot", r.SnapshotID)
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return DirectCommit{}, fmt.Errorf("evidence: envelope of %s: %w", r.SnapshotID, err)
	}
	row, err := st.rowJSON()
	if err != nil {
		return DirectCommit{}, err
	}
	var bound, reused bool
	var gotFP, id, chainHash string
	var keptEnv []byte
	var seq int64
	err = s.pool.QueryRow(ctx, appendDirectSQL, lockClass, string(row), fingerprint, string(envJSON), keep).
		Scan(&bound, &gotFP, &keptEnv, &reused, &id, &seq, &chainHash)
	if err != nil {
		return DirectCommit{}, dbError("append a direct call's snapshot", err)
	}
	if bound {
		a := DirectAnswer{Fingerprint: gotFP}
		if err := json.Unmarshal(keptEnv, &a.Envelope); err != nil {
			return DirectCommit{}, fmt.Errorf("evidence: the envelope kept under %s: %w", r.ChainKey, err)
		}
		return DirectCommit{Kept: &a}, nil
	}
	if !reused {
		r.ChainSeq, r.ChainHash = seq, chainHash
	}
	return DirectCommit{SnapshotID: id, Reused: reused}, nil
}
