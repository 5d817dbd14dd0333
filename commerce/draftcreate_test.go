package commerce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// createInput is a draft and its audit row as the handler would build them,
// for correlation id n and idempotency key key.
func createInput(t *testing.T, n int, key string) (NewDraft, evidence.TwoPhaseRow) {
	t.Helper()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	id, err := newID("do_", now)
	if err != nil {
		t.Fatal(err)
	}
	corr := fmt.Sprintf("corr-%016x", 0xc0000000+n)
	user := evidence.HashUserID("u_create")
	total := draftArgs(t).Total
	d := NewDraft{Scope: DraftScope{UserIDHash: user, Tool: ToolCreateDraftOrder, IdempotencyKey: key}, DraftOrderID: id,
		Total: total, ShipTo: SealedAddress{Country: "DE", PostalCode: "51147", Ciphertext: []byte{1}, Nonce: []byte{2}, KeyID: "k"},
		CorrelationID: corr, CreatedAt: now, ExpiresAt: now.Add(DraftOrderTTL)}
	sha := strings.Repeat("ab", 32)
	a := evidence.TwoPhaseRow{CorrelationID: corr, Tool: ToolCreateDraftOrder, UserIDHash: user, ActorType: "user",
		Action: "allow", Reason: "test", PayloadSHA: sha,
		Refs: []byte(fmt.Sprintf(`{"correlation_id": %q, "payload_sha": %q, "source": "activity"}`, corr, sha))}
	return d, a
}

func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The audit row and the draft commit together: a refusal of the audit row,
// written after the draft in the same statement, takes the draft with it.
func TestDraftCreateIsOneTransaction(t *testing.T) {
	pool := testenv.Postgres(t)
	s := PGDrafts{Pool: pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
	d, a := createInput(t, 1, "one-tx-key-01")
	a.PayloadSHA = "not hex" // audit_events' CHECK refuses it
	_, err := s.Create(context.Background(), d, a)
	var perm *PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("create = %v, want a PermanentError", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM draft_orders`); n != 0 {
		t.Fatalf("%d drafts committed without their audit row", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM audit_events`); n != 0 {
		t.Fatalf("%d audit rows", n)
	}
}

// A concurrent attempt of the same call that writes or closes the audit row
// between the function's read and its write makes it give up whole: no
// draft, a transient error (the activity retries), the other row intact.
func TestDraftCreateLosesARaceWhole(t *testing.T) {
	pool := testenv.Postgres(t)
	s := PGDrafts{Pool: pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
	ctx := context.Background()
	for i, c := range []struct {
		name   string
		before string // committed before the race (the row an earlier attempt left)
		racing string // the concurrent writer's statement, committed while Create waits for it
		status string // the row's status afterwards
	}{
		{name: "row inserted concurrently", racing: `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash,
				actor_type, action, reason, status, payload_sha, workflow_id, run_id, activity_id)
			VALUES ($1, true, 'checkout.create_draft_order', '', 'user', 'allow', '', 'pending', '', '', '', '')`,
			status: "pending"},
		{name: "pending row closed concurrently", before: `INSERT INTO audit_events (correlation_id, two_phase, tool,
				user_id_hash, actor_type, action, reason, status, payload_sha, workflow_id, run_id, activity_id)
			VALUES ($1, true, 'checkout.create_draft_order', '', 'user', 'allow', '', 'pending', '', '', '', '')`,
			racing: `UPDATE audit_events SET status = 'failed', finalized_at = now(),
				evidence_refs = evidence_refs || '{"reconcile_action": "mark_failed_timeout"}'
			WHERE correlation_id = $1 AND two_phase`, status: "failed"},
	} {
		d, a := createInput(t, 10+i, fmt.Sprintf("race-key-%04d", i))
		if c.before != "" {
			if _, err := pool.Exec(ctx, c.before, a.CorrelationID); err != nil {
				t.Fatal(err)
			}
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, c.racing, a.CorrelationID); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := s.Create(ctx, d, a); done <- err }()
		waitForLockWait(t, pool)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		err = <-done
		var perm *PermanentError
		if err == nil || errors.As(err, &perm) || !strings.Contains(err.Error(), "40001") {
			t.Errorf("%s: create = %v, want a transient serialization failure", c.name, err)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM draft_orders WHERE idempotency_key = $1`, d.Scope.IdempotencyKey); n != 0 {
			t.Errorf("%s: %d drafts committed", c.name, n)
		}
		if n := countRows(t, pool, `SELECT count(*) FROM audit_events WHERE correlation_id = $1 AND status = $2`,
			a.CorrelationID, c.status); n != 1 {
			t.Errorf("%s: no single %s audit row left", c.name, c.status)
		}
	}
}

// waitForLockWait returns once a backend of the test database waits for a lock.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for deadline := time.Now().Add(testenv.Deadline(10 * time.Second)); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if countRows(t, pool, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0 {
			return
		}
	}
	t.Fatal("create never waited for the concurrent writer")
}
