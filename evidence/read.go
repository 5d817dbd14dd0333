package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// ErrNotFound is returned (wrapped in a NOT_FOUND toolkit error) when a
// snapshot id names no row.
var ErrNotFound = errors.New("evidence: snapshot not found")

// Get returns one snapshot's clear columns, for the auditor.
func (s *Store) Get(ctx context.Context, snapshotID string) (*SnapshotRecord, error) {
	r, err := scanRecord(s.pool.QueryRow(ctx, `SELECT `+snapshotColumns+` FROM evidence_snapshots WHERE snapshot_id = $1`, snapshotID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, toolkit.Errorf(toolkit.NotFound, "evidence snapshot %s does not exist", snapshotID).WithCause(ErrNotFound)
	}
	if err != nil {
		return nil, dbError("get snapshot", err)
	}
	return r, nil
}

// GetMany returns the snapshots of ids that exist, by id, in one round
// trip: the write's seal check reads the three or four snapshots a total
// names at once (docs/performance.md#the-writes-evidence-from-memory-or-in-one-read). An
// id that names no row is absent from the map.
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]*SnapshotRecord, error) {
	got := make(map[string]*SnapshotRecord, len(ids))
	if len(ids) == 0 {
		return got, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+snapshotColumns+` FROM evidence_snapshots WHERE snapshot_id = ANY($1)`, ids)
	if err != nil {
		return nil, dbError("get snapshots", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, dbError("scan snapshot", err)
		}
		got[r.SnapshotID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("get snapshots", err)
	}
	return got, nil
}

// SnapshotsForWorkflow returns a workflow's snapshots (every run) in chain order.
func (s *Store) SnapshotsForWorkflow(ctx context.Context, workflowID string) ([]*SnapshotRecord, error) {
	return s.chain(ctx, workflowID)
}

// SnapshotsForTrace returns the snapshots written under one trace (the
// W3C trace id of a request), oldest first: from a trace to its evidence.
func (s *Store) SnapshotsForTrace(ctx context.Context, traceID string) ([]*SnapshotRecord, error) {
	return s.list(ctx, `trace_id = $1 ORDER BY created_at, snapshot_id`, strings.ToLower(traceID))
}

func (s *Store) chain(ctx context.Context, chainKey string) ([]*SnapshotRecord, error) {
	return s.list(ctx, `chain_key = $1 ORDER BY chain_seq`, chainKey)
}

// list reads the snapshots a where clause (with its order) selects.
func (s *Store) list(ctx context.Context, where string, arg any) ([]*SnapshotRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+snapshotColumns+` FROM evidence_snapshots WHERE `+where, arg)
	if err != nil {
		return nil, dbError("list snapshots", err)
	}
	defer rows.Close()
	var out []*SnapshotRecord
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, dbError("scan snapshot", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("list snapshots", err)
	}
	return out, nil
}

// ReadRaw is the only read path for a snapshot's raw output. It requires
// who reads (reader) and why (reason), writes the access-log row and reads
// the ciphertext in one transaction, commits, and only then decrypts: no
// plaintext leaves the store without its log row. A snapshot stored
// without raw output (sanitising changed nothing) returns its output.
func (s *Store) ReadRaw(ctx context.Context, snapshotID, reader, reason string) (json.RawMessage, error) {
	reader, reason = strings.TrimSpace(reader), strings.TrimSpace(reason)
	if reader == "" || reason == "" {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "reading raw evidence needs a reader and a reason")
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, dbError("begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `INSERT INTO evidence_access_log (snapshot_id, reader, reason) VALUES ($1, $2, $3)`,
		snapshotID, reader, reason); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation: no such snapshot
			return nil, toolkit.Errorf(toolkit.NotFound, "evidence snapshot %s does not exist", snapshotID).WithCause(ErrNotFound)
		}
		return nil, dbError("log raw access", err)
	}
	var output, nonce, ct []byte
	var keyID string
	if err := tx.QueryRow(ctx, `SELECT output, raw_nonce, raw_ciphertext, coalesce(raw_key_id, '')
		FROM evidence_snapshots WHERE snapshot_id = $1`, snapshotID).Scan(&output, &nonce, &ct, &keyID); err != nil {
		return nil, dbError("read raw evidence", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, dbError("commit raw access", err)
	}
	s.log.Info("raw evidence read", zap.String("snapshot_id", snapshotID), zap.String("reader", reader),
		zap.Bool("encrypted", ct != nil))
	if ct == nil {
		return json.RawMessage(output), nil
	}
	plain, err := s.cipher.Open(keyID, nonce, ct, []byte(snapshotID))
	if err != nil {
		return nil, fmt.Errorf("evidence: raw output of %s: %w", snapshotID, err)
	}
	return json.RawMessage(plain), nil
}
