package evidence

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// seedAudit inserts a two-phase audit row directly, with an age.
func seedAudit(t *testing.T, pool *pgxpool.Pool, n int, status string, age time.Duration, refs string) int64 {
	t.Helper()
	var id int64
	finalized := "NULL"
	if status != "pending" {
		finalized = "now() - make_interval(secs => $3)"
	}
	err := pool.QueryRow(ctxT(t), `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type,
			action, reason, status, payload_sha, workflow_id, run_id, activity_id, evidence_refs, created_at, finalized_at)
		VALUES ($1, true, 'checkout.create_draft_order', 'uh_x', 'user', 'allow', 'seeded', $2, '', 'wf-seed', 'r1', $4,
			$5::jsonb, now() - make_interval(secs => $3), `+finalized+`) RETURNING audit_id`,
		fmt.Sprintf("corr-%016x", n), status, age.Seconds(), fmt.Sprint(n), refs).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestReconcileMarksStaleAndIsIdempotent(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	stale1 := seedAudit(t, pool, 1, "pending", 3*time.Hour, `{"source":"activity","error_type":"kept"}`)
	stale2 := seedAudit(t, pool, 2, "pending", 26*time.Hour, `{}`)
	fresh := seedAudit(t, pool, 3, "pending", 10*time.Minute, `{}`)
	failed := seedAudit(t, pool, 4, "failed", 5*time.Hour, `{"error_type":"ADDRESS_INVALID"}`)
	// A success audit with its snapshot, and one without (a violation).
	seedAudit(t, pool, 5, "success", time.Hour, `{}`)
	snap := snapshot(t, "wf-seed", 5, map[string]any{"draft_order_id": "do_5"})
	snap.Tool, snap.CorrelationID = "checkout.create_draft_order", fmt.Sprintf("corr-%016x", 5)
	if _, err := s.Record(ctx, snap); err != nil {
		t.Fatal(err)
	}
	orphan := seedAudit(t, pool, 6, "success", time.Hour, `{}`)
	// Evidence of a successful call whose audit says failed (a violation).
	snap7 := snapshot(t, "wf-seed", 4, map[string]any{"draft_order_id": "do_4"})
	snap7.Tool, snap7.CorrelationID = "checkout.create_draft_order", fmt.Sprintf("corr-%016x", 4)
	snap7ID, err := s.Record(ctx, snap7)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first pass: %+v", rep)
	if rep.MarkedFailed != 2 || rep.StillPending != 1 || rep.PendingAfterSeconds != 7200 {
		t.Fatalf("first pass: %+v", rep)
	}
	if rep.SuccessWithoutSnapshot != 1 || rep.SnapshotWithFailedAudit != 1 || rep.ViolationCount() != 2 {
		t.Fatalf("invariants: %+v", rep)
	}
	names := map[string]Violation{}
	for _, v := range rep.Violations {
		names[v.Invariant] = v
	}
	if names[InvSuccessWithoutSnapshot].AuditID != orphan || names[InvSnapshotWithFailedAudit].SnapshotID != snap7ID {
		t.Fatalf("violations name the wrong rows: %+v", rep.Violations)
	}

	for _, id := range []int64{stale1, stale2} {
		var status, reason string
		var refs map[string]any
		var raw []byte
		if err := pool.QueryRow(ctx, `SELECT status, reason, evidence_refs FROM audit_events WHERE audit_id = $1`, id).Scan(&status, &reason, &raw); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw, &refs)
		if status != "failed" || refs["reconcile_action"] != "mark_failed_timeout" || refs["timeout_detected_at"] == nil {
			t.Fatalf("audit %d after reconcile: %s %s %v", id, status, reason, refs)
		}
		if secs, _ := refs["stale_duration_seconds"].(float64); secs < 3*3600 {
			t.Fatalf("stale_duration_seconds = %v", refs["stale_duration_seconds"])
		}
		if id == stale1 && (refs["error_type"] != "kept" || refs["source"] != "activity") {
			t.Fatalf("existing diagnostics overwritten: %v", refs)
		}
	}
	var freshStatus, failedRefs string
	_ = pool.QueryRow(ctx, `SELECT status FROM audit_events WHERE audit_id = $1`, fresh).Scan(&freshStatus)
	_ = pool.QueryRow(ctx, `SELECT evidence_refs::text FROM audit_events WHERE audit_id = $1`, failed).Scan(&failedRefs)
	if freshStatus != "pending" || failedRefs != `{"error_type": "ADDRESS_INVALID"}` {
		t.Fatalf("fresh %s, failed refs %s: reconcile touched what it must not", freshStatus, failedRefs)
	}

	again, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	if again.MarkedFailed != 0 || again.StillPending != 1 {
		t.Fatalf("second pass changed something: %+v", again)
	}
	// A late finaliser loses against reconcile: failed is terminal.
	if won, err := s.Finalize(ctx, fmt.Sprintf("corr-%016x", 1), AuditSuccess, nil); won || err != nil {
		t.Fatalf("finalize after reconcile: %v %v", won, err)
	}

	if _, err := Reconcile(ctx, pool, ReconcileOptions{PendingAfter: 30 * time.Second, RowKeys: s.RowKeys()}); err == nil {
		t.Fatal("a threshold below 60s was accepted")
	}
	missing, err := MissingSnapshots(ctx, pool, []string{snap7ID, "ev_01M815JJ8JTCFRDQF3JJ5RWW4Q"})
	if err != nil || len(missing) != 1 || missing[0] != "ev_01M815JJ8JTCFRDQF3JJ5RWW4Q" {
		t.Fatalf("MissingSnapshots = %v, %v", missing, err)
	}
}

func TestReconcileSideEffectTools(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	snap := snapshot(t, "wf-se", 1, map[string]any{"draft_order_id": "do_1"})
	snap.Tool, snap.CreatedAt = "checkout.create_draft_order", time.Now().Add(-time.Hour)
	id, err := s.Record(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys(), SideEffectTools: []string{"checkout.create_draft_order"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotWithoutAudit != 1 || rep.Violations[0].SnapshotID != id {
		t.Fatalf("snapshot without audit not reported: %+v", rep)
	}
}
