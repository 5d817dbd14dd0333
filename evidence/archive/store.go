// Package archive keeps closed workflows' histories in PostgreSQL, sealed
// with the evidence key, because Temporal deletes a history once the
// namespace retention has passed and an audit must still be possible
// afterwards. It stores and reads history documents (the JSON
// `temporal workflow show --output json` writes); reading them from the
// server and decoding them is package activities/history's.
package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// ErrNotArchived is returned by Get when the archive holds no such run.
var ErrNotArchived = errors.New("archive: no archived history for this workflow")

// ErrAltered is returned by Get when an archived history no longer
// decrypts or no longer matches its hash: someone changed the row.
var ErrAltered = errors.New("archive: archived history was altered")

// Cipher seals histories at rest; *evidence.AESGCM (the evidence key) is
// the one the worker uses. Seal binds the ciphertext to aad; Open picks the
// key the row names, so keys can rotate.
type Cipher interface {
	KeyID() string
	Seal(plaintext, aad []byte) (nonce, ciphertext []byte, err error)
	Open(keyID string, nonce, ciphertext, aad []byte) ([]byte, error)
}

// Store is the history archive in PostgreSQL (migration 00040). Histories
// hold PII, so they are stored only encrypted and every read is logged.
// Rows are append-only.
type Store struct {
	pool   *pgxpool.Pool
	cipher Cipher
}

// NewStore returns the archive on pool, sealing histories with c.
func NewStore(pool *pgxpool.Pool, c Cipher) (*Store, error) {
	if pool == nil || c == nil {
		return nil, errors.New("archive: a pool and a cipher are required: histories are never stored in clear")
	}
	return &Store{pool: pool, cipher: c}, nil
}

// Record is one archived run.
type Record struct {
	WorkflowID   string    `json:"workflow_id"`
	RunID        string    `json:"run_id"`
	WorkflowType string    `json:"workflow_type"`
	TaskQueue    string    `json:"task_queue"`
	CloseStatus  string    `json:"close_status"`
	StartedAt    time.Time `json:"started_at"`
	ClosedAt     time.Time `json:"closed_at"`
	Events       int       `json:"event_count"`
	// HistoryJSON is the clear history document (activities/history.Encode).
	HistoryJSON []byte `json:"-"`
	// HistorySHA256 is "sha256:"+hex of HistoryJSON when it was archived.
	HistorySHA256 string    `json:"history_sha256"`
	ArchivedAt    time.Time `json:"archived_at"`
}

// aad binds a sealed history to its row, so it cannot be moved to another.
func aad(workflowID, runID string) []byte {
	return []byte("history_archive\x1f" + workflowID + "\x1f" + runID)
}

// Put archives r once: a run already archived is left as it is (its history
// cannot change after close) and inserted is false.
func (s *Store) Put(ctx context.Context, r Record) (inserted bool, err error) {
	nonce, sealed, err := s.cipher.Seal(r.HistoryJSON, aad(r.WorkflowID, r.RunID))
	if err != nil {
		return false, fmt.Errorf("archive: seal history of %s/%s: %w", r.WorkflowID, r.RunID, err)
	}
	var started *time.Time
	if !r.StartedAt.IsZero() {
		started = &r.StartedAt
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO history_archive (workflow_id, run_id, workflow_type, task_queue,
		close_status, started_at, closed_at, event_count, history_nonce, history_sealed, key_id, history_sha256)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (workflow_id, run_id) DO NOTHING`,
		r.WorkflowID, r.RunID, r.WorkflowType, r.TaskQueue, r.CloseStatus, started, r.ClosedAt, r.Events,
		nonce, sealed, s.cipher.KeyID(), r.HistorySHA256)
	if err != nil {
		return false, fmt.Errorf("archive %s/%s: %w", r.WorkflowID, r.RunID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Has reports whether the run is archived.
func (s *Store) Has(ctx context.Context, workflowID, runID string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM history_archive WHERE workflow_id = $1 AND run_id = $2)`,
		workflowID, runID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("archive lookup %s/%s: %w", workflowID, runID, err)
	}
	return ok, nil
}

// Get is the only read path of an archived history: it needs who reads and
// why, logs the read and reads the row in one transaction, and decrypts
// only after the log row is committed. runID "" means the run of
// workflowID that closed last. A missing run is ErrNotArchived; a row that
// no longer decrypts or matches its hash is ErrAltered (with the record's
// clear columns).
func (s *Store) Get(ctx context.Context, workflowID, runID, reader, reason string) (*Record, error) {
	reader, reason = strings.TrimSpace(reader), strings.TrimSpace(reason)
	if reader == "" || reason == "" {
		return nil, errors.New("archive: reading a history needs a reader and a reason")
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("archive: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var r Record
	var started *time.Time
	var nonce, sealed []byte
	var keyID string
	err = tx.QueryRow(ctx, `SELECT workflow_id, run_id, workflow_type, task_queue, close_status, started_at,
		closed_at, event_count, history_nonce, history_sealed, key_id, history_sha256, archived_at FROM history_archive
		WHERE workflow_id = $1 AND ($2 = '' OR run_id = $2) ORDER BY closed_at DESC LIMIT 1`, workflowID, runID).
		Scan(&r.WorkflowID, &r.RunID, &r.WorkflowType, &r.TaskQueue, &r.CloseStatus, &started, &r.ClosedAt,
			&r.Events, &nonce, &sealed, &keyID, &r.HistorySHA256, &r.ArchivedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s %s", ErrNotArchived, workflowID, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("read archive %s/%s: %w", workflowID, runID, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO history_archive_reads (workflow_id, run_id, reader, reason) VALUES ($1, $2, $3, $4)`,
		r.WorkflowID, r.RunID, reader, reason); err != nil {
		return nil, fmt.Errorf("archive: log read of %s/%s: %w", r.WorkflowID, r.RunID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("archive: commit read log: %w", err)
	}
	if started != nil {
		r.StartedAt = started.UTC()
	}
	r.ClosedAt, r.ArchivedAt = r.ClosedAt.UTC(), r.ArchivedAt.UTC()
	if r.HistoryJSON, err = s.cipher.Open(keyID, nonce, sealed, aad(r.WorkflowID, r.RunID)); err != nil {
		return &r, fmt.Errorf("%w: %s/%s does not decrypt: %v", ErrAltered, r.WorkflowID, r.RunID, err)
	}
	if got := toolkit.HashBytes(r.HistoryJSON); got != r.HistorySHA256 {
		return &r, fmt.Errorf("%w: %s/%s hashes to %s, archived as %s", ErrAltered, r.WorkflowID, r.RunID, got, r.HistorySHA256)
	}
	return &r, nil
}

// Watermark returns how far scope has been archived; zero when never.
func (s *Store) Watermark(ctx context.Context, scope string) (time.Time, error) {
	var t time.Time
	err := s.pool.QueryRow(ctx, `SELECT archived_until FROM history_archive_watermarks WHERE scope = $1`, scope).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read archive watermark %s: %w", scope, err)
	}
	return t.UTC(), nil
}

// AdvanceWatermark records that every run of scope closed before until is
// archived. It never moves the watermark back, so an old pass finishing
// late cannot undo a newer one.
func (s *Store) AdvanceWatermark(ctx context.Context, scope string, until time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO history_archive_watermarks (scope, archived_until) VALUES ($1, $2)
		ON CONFLICT (scope) DO UPDATE SET archived_until = greatest(history_archive_watermarks.archived_until, EXCLUDED.archived_until),
		updated_at = now()`, scope, until)
	if err != nil {
		return fmt.Errorf("advance archive watermark %s: %w", scope, err)
	}
	return nil
}
