package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// lockClass namespaces this package's advisory locks (two-key form), so
// they never meet another user's locks.
const lockClass = 0x45_56 // "EV"

// Store is the PostgreSQL evidence store. It implements toolkit.EvidenceSink
// and is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	cipher Cipher
	log    *zap.Logger
	now    func() time.Time
	// audited counts closed audit rows by outcome (ObserveAudits).
	audited func(outcome string)
}

// ObserveAudits makes f count every audit row this store closes, by
// outcome: success, failed (Finalize won), rejected (WriteReject wrote).
// Call it while wiring, before the store is used.
func (s *Store) ObserveAudits(f func(outcome string)) { s.audited = f }

func (s *Store) observeAudit(outcome string) {
	if s.audited != nil {
		s.audited(outcome)
	}
}

var _ toolkit.EvidenceSink = (*Store)(nil)

// NewStore builds a store on pool that encrypts raw outputs with c.
func NewStore(pool *pgxpool.Pool, c Cipher, logger *zap.Logger) (*Store, error) {
	if pool == nil {
		return nil, errors.New("evidence: nil pool")
	}
	if c == nil {
		return nil, errors.New("evidence: a cipher is required: raw evidence is never stored in clear")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Store{pool: pool, cipher: c, log: logger.Named("evidence"), now: time.Now}, nil
}

// NewStoreFromConfig builds the store with the AES-256-GCM key of
// CARTWRIGHT_EVIDENCE_KEY (id CARTWRIGHT_EVIDENCE_KEY_ID). A missing or
// malformed key is an error: the worker must not start without one.
func NewStoreFromConfig(pool *pgxpool.Pool, cfg config.Config, logger *zap.Logger) (*Store, error) {
	c, err := NewAESGCMFromBase64(cfg.EvidenceKeyID, cfg.EvidenceKey)
	if err != nil {
		return nil, err
	}
	return NewStore(pool, c, logger)
}

// Pool returns the store's connection pool (reconcile and the audit share it).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Record implements toolkit.EvidenceSink: RecordStep's snapshot id.
func (s *Store) Record(ctx context.Context, snap toolkit.Snapshot) (string, error) {
	rec, err := s.RecordStep(ctx, snap)
	return rec.SnapshotID, err
}

// RecordStep implements toolkit.StepRecorder. It appends one snapshot to
// its workflow's chain, unless the step already holds one: a step is one
// call of one tool with one input in one activity of one run (its id, not
// its attempt), so a retried attempt or a local activity run again after a
// lost workflow task gets the snapshot already written, with its answer,
// and never a second row (docs/evidence.md#one-snapshot-per-step). Outside
// an activity the request id is the step. Transient database failures come
// back as a retryable UPSTREAM_ERROR.
func (s *Store) RecordStep(ctx context.Context, snap toolkit.Snapshot) (toolkit.Recorded, error) {
	r, dedupeKey, err := s.build(snap)
	if err != nil {
		return toolkit.Recorded{}, err
	}
	rec, err := s.append(ctx, r, dedupeKey)
	if err != nil {
		return toolkit.Recorded{}, err
	}
	s.log.Debug("evidence recorded", zap.String("snapshot_id", rec.SnapshotID), zap.String("tool", r.Tool),
		zap.String("workflow_id", r.WorkflowID), zap.String("activity_id", r.ActivityID),
		zap.Int32("attempt", r.Attempt), zap.Bool("reused", rec.Reused), zap.Bool("raw_encrypted", r.HasRaw))
	return rec, nil
}

// build turns a toolkit snapshot into a row (without its chain position),
// encrypting the raw output, and computes its dedupe key.
func (s *Store) build(snap toolkit.Snapshot) (*SnapshotRecord, string, error) {
	if snap.Tool == "" || snap.ToolVersion == "" {
		return nil, "", toolkit.Errorf(toolkit.InvalidArgument, "evidence: a snapshot needs the tool name and version")
	}
	output := snap.Output
	if len(output) == 0 {
		output = json.RawMessage("null")
	}
	hash, err := toolkit.OutputHash(output)
	if err != nil {
		return nil, "", toolkit.Errorf(toolkit.InvalidArgument, "evidence: output of %s is not JSON: %v", snap.Tool, err)
	}
	if snap.OutputHash != "" && snap.OutputHash != hash {
		return nil, "", toolkit.Errorf(toolkit.InvalidArgument,
			"evidence: output hash %s of %s is not the canonical hash of its output", snap.OutputHash, snap.Tool)
	}
	created := snap.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	id, err := NewSnapshotID(created)
	if err != nil {
		return nil, "", err
	}
	r := &SnapshotRecord{
		SnapshotID: id, Tool: snap.Tool, ToolVersion: snap.ToolVersion, Build: snap.Build,
		WorkflowID: snap.Call.WorkflowID, RunID: snap.Call.RunID, ActivityID: snap.Call.ActivityID,
		ActivityType: snap.Call.ActivityType, Attempt: snap.Call.Attempt,
		RequestID: snap.RequestID, CorrelationID: snap.CorrelationID, UserIDHash: HashUserID(snap.UserID),
		InputDigest: snap.InputDigest, Output: output, OutputHash: hash, RulesetVersion: snap.RulesetVersion,
		TTLSeconds: int(snap.TTL / time.Second), Status: string(snap.Status),
		CreatedAt: created.UTC().Truncate(time.Microsecond), // what timestamptz keeps
		TraceID:   snap.TraceID,
	}
	if r.Status == "" {
		r.Status = string(toolkit.StatusOK)
	}
	if len(snap.RawOutput) > 0 {
		nonce, ct, err := s.cipher.Seal(snap.RawOutput, []byte(id))
		if err != nil {
			return nil, "", fmt.Errorf("evidence: encrypt raw output of %s: %w", snap.Tool, err)
		}
		r.rawNonce, r.rawCiphertext, r.RawKeyID, r.HasRaw = nonce, ct, s.cipher.KeyID(), true
	}
	var parts []string
	if r.WorkflowID != "" {
		r.ChainKey = r.WorkflowID
		parts = []string{"activity", r.WorkflowID, r.RunID, r.ActivityID}
	} else {
		if r.RequestID == "" {
			return nil, "", toolkit.Errorf(toolkit.InvalidArgument, "evidence: a snapshot outside an activity needs a request id")
		}
		r.ChainKey = "request:" + r.RequestID
		parts = []string{"request", r.RequestID}
	}
	// The step, not the answer: a second answer to the same step (a re-run
	// whose output carries a new timestamp) must not become a second row.
	// A refusal and an answer stay apart, so an answer never turns into a
	// refusal on reuse.
	parts = append(parts, "step", r.Tool, r.ToolVersion, r.InputDigest, strconv.FormatBool(r.Status == string(toolkit.StatusError)))
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return r, hex.EncodeToString(sum[:]), nil
}

// append writes r at the end of its chain under a per-chain advisory lock,
// or returns the row the step already holds.
func (s *Store) append(ctx context.Context, r *SnapshotRecord, dedupeKey string) (toolkit.Recorded, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return toolkit.Recorded{}, dbError("begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	var existing storedStep
	var lastHash string
	var lastSeq int64
	batch := &pgx.Batch{}
	batch.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockClass, r.ChainKey)
	batch.Queue(`SELECT snapshot_id, output, output_hash, status, ruleset_version, created_at
		FROM evidence_snapshots WHERE dedupe_key = $1`, dedupeKey).
		QueryRow(func(row pgx.Row) error { return existing.scan(row) })
	batch.Queue(`SELECT coalesce(max(chain_seq), 0), coalesce((SELECT chain_hash FROM evidence_snapshots
		WHERE chain_key = $1 ORDER BY chain_seq DESC LIMIT 1), '') FROM evidence_snapshots WHERE chain_key = $1`, r.ChainKey).
		QueryRow(func(row pgx.Row) error { return row.Scan(&lastSeq, &lastHash) })
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return toolkit.Recorded{}, dbError("lock chain", err)
	}
	if existing.SnapshotID != "" {
		if err := tx.Commit(ctx); err != nil {
			return toolkit.Recorded{}, dbError("commit", err)
		}
		return existing.Recorded, nil
	}

	r.ChainSeq, r.PrevChainHash = lastSeq+1, lastHash
	if r.ContentHash, err = r.contentHash(); err != nil {
		return toolkit.Recorded{}, fmt.Errorf("evidence: content hash: %w", err)
	}
	r.ChainHash = chainHash(r.PrevChainHash, r.ContentHash)
	var keyID *string
	if r.HasRaw {
		keyID = &r.RawKeyID
	}
	batch = &pgx.Batch{}
	batch.Queue(`INSERT INTO evidence_snapshots (snapshot_id, dedupe_key, chain_key, chain_seq, tool, tool_version,
		build, workflow_id, run_id, activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash,
		input_digest, output, output_hash, raw_ciphertext, raw_nonce, raw_key_id, ruleset_version, ttl_seconds,
		status, created_at, content_hash, prev_chain_hash, chain_hash, trace_id)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,
		NULLIF($29, ''))`,
		r.SnapshotID, dedupeKey, r.ChainKey, r.ChainSeq, r.Tool, r.ToolVersion, r.Build, r.WorkflowID, r.RunID,
		r.ActivityID, r.ActivityType, r.Attempt, r.RequestID, r.CorrelationID, r.UserIDHash, r.InputDigest,
		string(r.Output), r.OutputHash, r.rawCiphertext, r.rawNonce, keyID, r.RulesetVersion, r.TTLSeconds,
		r.Status, r.CreatedAt, r.ContentHash, r.PrevChainHash, r.ChainHash, r.TraceID)
	batch.Queue(`INSERT INTO evidence_chain_heads (chain_key, last_seq, last_hash) VALUES ($1, $2, $3)
		ON CONFLICT (chain_key) DO UPDATE SET last_seq = EXCLUDED.last_seq, last_hash = EXCLUDED.last_hash, updated_at = now()`,
		r.ChainKey, r.ChainSeq, r.ChainHash)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return toolkit.Recorded{}, dbError("insert snapshot", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return toolkit.Recorded{}, dbError("commit", err)
	}
	return toolkit.Recorded{SnapshotID: r.SnapshotID, OutputHash: r.OutputHash}, nil
}

// storedStep is the snapshot a step already holds, if any.
type storedStep struct{ toolkit.Recorded }

// scan reads the step's row; no row leaves it empty.
func (st *storedStep) scan(row pgx.Row) error {
	var output []byte
	var status string
	err := row.Scan(&st.SnapshotID, &output, &st.OutputHash, &status, &st.RulesetVersion, &st.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	st.Output, st.Status, st.Reused = json.RawMessage(output), toolkit.Status(status), true
	st.CreatedAt = st.CreatedAt.UTC()
	return nil
}
