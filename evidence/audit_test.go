package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

func entry(n int) AuditEntry {
	return AuditEntry{
		CorrelationID: fmt.Sprintf("corr-%016x", n), Tool: "checkout.create_draft_order", UserID: "user-7",
		ActorType: toolkit.ActorUser, Action: ActionAllow, Reason: "user_confirmed_total",
		PayloadSHA: fmt.Sprintf("%064x", n),
		Call:       toolkit.CallContext{WorkflowID: "draft-order/user-7/k", RunID: "r1", ActivityID: fmt.Sprint(n), Attempt: 1},
		Refs:       map[string]any{"draft_order_ref": "pending"},
	}
}

func TestTwoPhaseAudit(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	e := entry(1)
	id, err := s.WritePending(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.WritePending(ctx, e) // a retried activity finds its own row
	if err != nil || again != id {
		t.Fatalf("retried WritePending = %d (%v), want %d", again, err, id)
	}
	won, err := s.Finalize(ctx, e.CorrelationID, AuditSuccess, map[string]any{"draft_order_id": "do_123"})
	if err != nil || !won {
		t.Fatalf("finalize = %v, %v", won, err)
	}
	if won, err := s.Finalize(ctx, e.CorrelationID, AuditFailed, map[string]any{"error_type": "late"}); err != nil || won {
		t.Fatalf("second finalize = %v, %v; want lost", won, err)
	}
	recs, err := s.AuditsForCorrelation(ctx, e.CorrelationID)
	if err != nil || len(recs) != 1 || recs[0].Status != AuditSuccess {
		t.Fatalf("audits: %+v, %v", recs, err)
	}
	var refs map[string]any
	_ = json.Unmarshal(recs[0].EvidenceRefs, &refs)
	if refs["draft_order_id"] != "do_123" || refs["correlation_id"] != e.CorrelationID || refs["draft_order_ref"] != "pending" {
		t.Fatalf("refs after patch: %v", refs)
	}
	if recs[0].UserIDHash == "user-7" || recs[0].UserIDHash == "" {
		t.Fatalf("user id stored as %q", recs[0].UserIDHash)
	}
	// A final row cannot be changed, even by hand.
	if _, err := pool.Exec(ctx, `UPDATE audit_events SET status = 'pending', finalized_at = NULL WHERE audit_id = $1`, id); err == nil {
		t.Fatal("a final audit row was reopened")
	}
	if _, err := pool.Exec(ctx, `DELETE FROM audit_events WHERE audit_id = $1`, id); err == nil {
		t.Fatal("an audit row was deleted")
	}

	// failed needs diagnostics; unknown correlation ids are reported.
	e2 := entry(2)
	if _, err := s.WritePending(ctx, e2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finalize(ctx, e2.CorrelationID, AuditFailed, nil); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("failed without diagnostics: %v", err)
	}
	if won, err := s.Finalize(ctx, e2.CorrelationID, AuditFailed, map[string]any{"error_type": "ADDRESS_INVALID"}); !won || err != nil {
		t.Fatalf("finalize failed: %v %v", won, err)
	}
	if _, err := s.WritePending(ctx, e2); !errors.Is(err, ErrAuditClosed) {
		t.Fatalf("WritePending after failed = %v, want ErrAuditClosed", err)
	}
	if _, err := s.Finalize(ctx, "corr-ffffffffffffffff", AuditSuccess, nil); !errors.Is(err, ErrAuditNotFound) {
		t.Fatalf("finalize of unknown correlation = %v", err)
	}
	if _, err := s.WritePending(ctx, AuditEntry{CorrelationID: "nope", Tool: "x"}); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("bad correlation id: %v", err)
	}
}

func TestRejectIsFinalNeverPending(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	e := entry(3)
	e.Action, e.Reason = ActionReject, "compliance_blocked"
	if _, err := s.WritePending(ctx, e); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("pending reject: %v", err)
	}
	for i := 0; i < 2; i++ { // idempotent
		if err := s.WriteReject(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var n, pending int
	_ = pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE action = 'reject' AND status = 'success'),
		count(*) FILTER (WHERE status = 'pending') FROM audit_events WHERE correlation_id = $1`, e.CorrelationID).Scan(&n, &pending)
	if n != 1 || pending != 0 {
		t.Fatalf("reject rows %d, pending %d", n, pending)
	}
	if won, err := s.Finalize(ctx, e.CorrelationID, AuditSuccess, nil); won || !errors.Is(err, ErrAuditNotFound) {
		t.Fatalf("finalize of a reject = %v, %v", won, err)
	}
}

func TestConcurrentFinalizersOneWins(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	for round := 0; round < 5; round++ {
		e := entry(100 + round)
		if _, err := s.WritePending(ctx, e); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		wins := make(chan bool, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				status, patch := AuditSuccess, map[string]any{"finaliser": i}
				if i%2 == 1 {
					status, patch = AuditFailed, map[string]any{"error_type": "UPSTREAM_ERROR", "finaliser": i}
				}
				won, err := s.Finalize(ctx, e.CorrelationID, status, patch)
				if err != nil {
					t.Error(err)
				}
				wins <- won
			}(i)
		}
		close(start)
		wg.Wait()
		close(wins)
		count := 0
		for w := range wins {
			if w {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("round %d: %d finalisers won, want exactly 1", round, count)
		}
	}
}
