package evidence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// stepRecordedState is the SQLSTATE evidence_append_batch raises when a
// staged step already holds a snapshot (migration 00081).
const stepRecordedState = "EV409"

// appendBatchSQL calls evidence_append_batch (migration 00081): every
// chain's lock in lock-key order, then evidence_append row by row; one
// statement, so one round trip and one transaction (docs/evidence.md#staged-batches).
const appendBatchSQL = `SELECT r_snapshot_id, r_chain_seq, r_content_hash, r_chain_hash
	FROM evidence_append_batch($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28)`

// staged is a row stage built: everything append needs, computed without
// I/O. RecordStep appends it at once, CommitSteps with others.
type staged struct {
	store      *Store
	r          *SnapshotRecord
	dedupeKey  string
	head, tail []byte
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

// stage builds snap's row (snapshot id, dedupe key, encrypted raw output)
// and its content hash cut around chain_seq.
func (s *Store) stage(snap toolkit.Snapshot) (*staged, error) {
	r, dedupeKey, err := s.build(snap)
	if err != nil {
		return nil, err
	}
	head, tail, err := r.contentHashParts()
	if err != nil {
		return nil, fmt.Errorf("evidence: content hash: %w", err)
	}
	return &staged{store: s, r: r, dedupeKey: dedupeKey, head: head, tail: tail}, nil
}

// batchColumns holds the staged rows column by column, as
// evidence_append_batch takes them.
type batchColumns struct {
	ids, keys, chains, tools, versions, builds, workflows, runs, activities, types []string
	attempts                                                                       []int32
	requests, correlations, users, inputs, outputs, outputHashes                   []string
	ciphertexts, nonces                                                            [][]byte
	keyIDs                                                                         []*string
	rulesets                                                                       []string
	ttls                                                                           []int32
	statuses                                                                       []string
	created                                                                        []time.Time
	traces                                                                         []string
	heads, tails                                                                   [][]byte
}

func (c *batchColumns) add(st *staged) {
	r := st.r
	var keyID *string
	if r.HasRaw {
		keyID = &r.RawKeyID
	}
	c.ids, c.keys, c.chains = append(c.ids, r.SnapshotID), append(c.keys, st.dedupeKey), append(c.chains, r.ChainKey)
	c.tools, c.versions, c.builds = append(c.tools, r.Tool), append(c.versions, r.ToolVersion), append(c.builds, r.Build)
	c.workflows, c.runs = append(c.workflows, r.WorkflowID), append(c.runs, r.RunID)
	c.activities, c.types = append(c.activities, r.ActivityID), append(c.types, r.ActivityType)
	c.attempts = append(c.attempts, r.Attempt)
	c.requests, c.correlations = append(c.requests, r.RequestID), append(c.correlations, r.CorrelationID)
	c.users, c.inputs = append(c.users, r.UserIDHash), append(c.inputs, r.InputDigest)
	c.outputs, c.outputHashes = append(c.outputs, string(r.Output)), append(c.outputHashes, r.OutputHash)
	c.ciphertexts, c.nonces, c.keyIDs = append(c.ciphertexts, r.rawCiphertext), append(c.nonces, r.rawNonce), append(c.keyIDs, keyID)
	c.rulesets, c.ttls, c.statuses = append(c.rulesets, r.RulesetVersion), append(c.ttls, int32(r.TTLSeconds)), append(c.statuses, r.Status)
	c.created, c.traces = append(c.created, r.CreatedAt), append(c.traces, r.TraceID)
	c.heads, c.tails = append(c.heads, st.head), append(c.tails, st.tail)
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
	var cols batchColumns
	for _, x := range steps {
		st, ok := x.(*staged)
		if !ok || st.store != s {
			return fmt.Errorf("evidence: commit of a step this store did not stage (%T)", x)
		}
		rows[st.r.SnapshotID] = st
		cols.add(st)
	}
	res, err := s.pool.Query(ctx, appendBatchSQL, lockClass, cols.ids, cols.keys, cols.chains, cols.tools,
		cols.versions, cols.builds, cols.workflows, cols.runs, cols.activities, cols.types, cols.attempts,
		cols.requests, cols.correlations, cols.users, cols.inputs, cols.outputs, cols.outputHashes,
		cols.ciphertexts, cols.nonces, cols.keyIDs, cols.rulesets, cols.ttls, cols.statuses, cols.created,
		cols.traces, cols.heads, cols.tails)
	if err != nil {
		return s.batchError(err, len(steps))
	}
	defer res.Close()
	written := 0
	for res.Next() {
		var id, contentHash, chainHash string
		var seq int64
		if err := res.Scan(&id, &seq, &contentHash, &chainHash); err != nil {
			return s.batchError(err, len(steps))
		}
		if st := rows[id]; st != nil {
			st.r.ChainSeq, st.r.ContentHash, st.r.ChainHash = seq, contentHash, chainHash
			written++
		}
	}
	if err := res.Err(); err != nil {
		return s.batchError(err, len(steps))
	}
	if written != len(steps) {
		return toolkit.Errorf(toolkit.UpstreamError, "evidence store: batch of %d snapshots answered %d rows", len(steps), written)
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
