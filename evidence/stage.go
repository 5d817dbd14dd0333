package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// stepRecordedState is the SQLSTATE evidence_append_rows raises when a
// staged step already holds a snapshot (migration 00191).
const stepRecordedState = "EV409"

// appendBatchSQL calls evidence_append_rows (migration 00191): every
// chain's lock in lock-key order, then evidence_append_row row by row; one
// statement, so one round trip and one transaction (docs/evidence.md#staged-batches).
const appendBatchSQL = `SELECT r_snapshot_id, r_chain_seq, r_chain_hash
	FROM evidence_append_rows(p_lock_class => $1, p_rows => $2)`

// staged is a row stage built: everything append needs, computed without
// I/O, its content hash included. RecordStep appends it at once,
// CommitSteps with others.
type staged struct {
	store     *Store
	r         *SnapshotRecord
	dedupeKey string
}

func (st *staged) SnapshotID() string { return st.r.SnapshotID }

// StageStep implements toolkit.EvidenceSink: what RecordStep does before it
// writes, without I/O.
func (s *Store) StageStep(snap toolkit.Snapshot) (toolkit.Staged, error) {
	st, err := s.stage(snap)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return st, nil
}

// stage builds snap's row (snapshot id, dedupe key, encrypted raw output),
// its whole content hash and its signature, in hash format 3: the database
// only links the row into its chain (docs/evidence.md#hash-chain).
func (s *Store) stage(snap toolkit.Snapshot) (*staged, error) {
	r, dedupeKey, err := s.build(snap)
	if err != nil {
		return nil, err
	}
	if s.signer == nil {
		return nil, errors.New("evidence: the store has no row signer: every row is signed by its writer (docs/evidence.md#row-signatures)")
	}
	if err := s.signer.signRow(r); err != nil {
		return nil, err
	}
	return &staged{store: s, r: r, dedupeKey: dedupeKey}, nil
}

// CommitSteps implements toolkit.EvidenceSink: it writes the staged rows in
// one statement (one round trip, one transaction), each after its chain's
// last row in the order staged. If a step already holds a snapshot, nothing
// is written and the error matches toolkit.ErrStepRecorded; a transient
// database failure is a retryable UPSTREAM_ERROR.
func (s *Store) CommitSteps(ctx context.Context, steps []toolkit.Staged) error {
	if len(steps) == 0 {
		return nil
	}
	rows := make(map[string]*staged, len(steps))
	batch := make([]newRow, 0, len(steps))
	for _, x := range steps {
		st, ok := x.(*staged)
		if !ok || st.store != s {
			return fmt.Errorf("evidence: commit of a step this store did not stage (%T)", x)
		}
		rows[st.r.SnapshotID] = st
		batch = append(batch, st.row())
	}
	rowsJSON, err := json.Marshal(batch)
	if err != nil {
		return fmt.Errorf("evidence: encode a batch of %d snapshots: %w", len(steps), err)
	}
	res, err := s.pool.Query(ctx, appendBatchSQL, lockClass, string(rowsJSON))
	if err != nil {
		return s.batchError(err, len(steps))
	}
	defer res.Close()
	written := 0
	for res.Next() {
		var id, chainHash string
		var seq int64
		if err := res.Scan(&id, &seq, &chainHash); err != nil {
			return s.batchError(err, len(steps))
		}
		if st := rows[id]; st != nil {
			st.r.ChainSeq, st.r.ChainHash = seq, chainHash
			written++
		}
	}
	if err := res.Err(); err != nil {
		return s.batchError(err, len(steps))
	}
	if written != len(steps) {
		return toolkit.Errorf(toolkit.UpstreamError, "evidence store: batch of %d snapshots answered %d rows", len(steps), written)
	}
	for _, st := range rows {
		s.own.add(st.r)
	}
	s.log.Debug("evidence batch recorded", zap.Int("snapshots", len(steps)))
	return nil
}

// batchError maps a failed batch: a step already recorded matches
// toolkit.ErrStepRecorded (CONFLICT: nothing was written), anything else as
// dbError does, always retryable, since the batch's answers are sound and
// only their storing failed.
func (s *Store) batchError(err error, n int) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == stepRecordedState {
		return toolkit.Errorf(toolkit.Conflict, "evidence store: a step of the batch already holds a snapshot; nothing written").
			WithCause(toolkit.ErrStepRecorded)
	}
	err = dbError(fmt.Sprintf("append batch of %d snapshots", n), err)
	var te *toolkit.Error
	if errors.As(err, &te) {
		return te
	}
	return toolkit.Errorf(toolkit.UpstreamError, "%v", err).WithCause(err)
}
