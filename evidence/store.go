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
	// signer signs every row this store writes (SignWith); keys verify
	// the rows it reads (VerifyWith), since when rows must be signed.
	signer *RowSigner
	keys   *RowKeys
	since  signingSince
	// own are the rows this store wrote last (ReadWritten).
	own *ownRows
}

// SignWith makes s sign every row it writes with signer, and verify with
// its public keys beside those VerifyWith gave. Call it while wiring,
// before the store is used; a store without a signer writes nothing.
func (s *Store) SignWith(signer *RowSigner) {
	s.signer = signer
	s.keys = RowKeysOf(signer).With(s.keys)
}

// VerifyWith makes s verify rows' signatures with keys (the writers'
// public keys, docs/evidence.md#row-signatures). Call it while wiring.
func (s *Store) VerifyWith(keys *RowKeys) { s.keys = s.keys.With(keys) }

// Signer is the signer of the rows s writes (nil: none).
func (s *Store) Signer() *RowSigner { return s.signer }

// RowKeys are the public keys s verifies with (nil: none).
func (s *Store) RowKeys() *RowKeys {
	if s == nil {
		return nil
	}
	return s.keys
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
	return &Store{pool: pool, cipher: c, log: logger.Named("evidence"), now: time.Now, own: newOwnRows(ownRowsKept)}, nil
}

// NewStoreFromConfig builds the store with the AES-256-GCM key of
// CARTWRIGHT_EVIDENCE_KEY (id CARTWRIGHT_EVIDENCE_KEY_ID), verifying rows
// with the writers' public keys the configuration names. A missing or
// malformed key is an error: the worker must not start without one. The
// store signs nothing (SignWith): a reader's.
func NewStoreFromConfig(pool *pgxpool.Pool, cfg config.Config, logger *zap.Logger) (*Store, error) {
	c, err := NewAESGCMFromBase64(cfg.EvidenceKeyID, cfg.EvidenceKey)
	if err != nil {
		return nil, err
	}
	keys, err := RowKeysFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	s, err := NewStore(pool, c, logger)
	if err != nil {
		return nil, err
	}
	s.VerifyWith(keys)
	return s, nil
}

// Pool returns the store's connection pool (reconcile and the audit share it).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Record is RecordStep answering only the snapshot id.
func (s *Store) Record(ctx context.Context, snap toolkit.Snapshot) (string, error) {
	rec, err := s.RecordStep(ctx, snap)
	return rec.SnapshotID, err
}

// RecordStep implements toolkit.EvidenceSink. It appends one snapshot to
// its workflow's chain, unless the step already holds one: a step is one
// call of one tool with one input in one activity of one run (its id, not
// its attempt), so a retried attempt or a local activity run again after a
// lost workflow task gets the snapshot already written, with its answer,
// and never a second row (docs/evidence.md#one-snapshot-per-step). Outside
// an activity the request id is the step. Transient database failures come
// back as a retryable UPSTREAM_ERROR.
func (s *Store) RecordStep(ctx context.Context, snap toolkit.Snapshot) (toolkit.Recorded, error) {
	st, err := s.stage(snap)
	if err != nil {
		return toolkit.Recorded{}, err
	}
	rec, err := s.append(ctx, st)
	if err != nil {
		return toolkit.Recorded{}, err
	}
	r := st.r
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
		TraceID:   snap.TraceID, WorkflowType: snap.Call.WorkflowType,
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
	if r.WorkflowID == "" && r.ActivityType == DirectActivityType {
		// A read answered without a workflow: its key's own chain
		// (docs/evidence.md#direct-calls).
		r.ChainKey = DirectChainKey(r.UserIDHash, r.RequestID)
		parts = []string{"direct", r.ChainKey}
	} else if r.WorkflowID != "" {
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
