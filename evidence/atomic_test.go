package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// WriteAtomic without a database: what it checks before the write, how it
// answers the row the write reports, and what it counts.
func TestWriteAtomic(t *testing.T) {
	var counted []string
	s := &Store{log: zap.NewNop(), audited: func(o string) { counted = append(counted, o) }}
	ctx := context.Background()
	e := entry(7)
	report := func(res AtomicResult, err error) AtomicWrite {
		return func(_ context.Context, row TwoPhaseRow) (AtomicResult, error) {
			var refs map[string]any
			if jerr := json.Unmarshal(row.Refs, &refs); jerr != nil || refs["correlation_id"] != e.CorrelationID ||
				refs["payload_sha"] != e.PayloadSHA || refs["source"] != "activity" || refs["draft_order_ref"] != "pending" {
				t.Errorf("row refs %s", row.Refs)
			}
			if row.UserIDHash != HashUserID(e.UserID) || row.Action != string(ActionAllow) || row.ActivityID != e.Call.ActivityID {
				t.Errorf("row %+v", row)
			}
			return res, err
		}
	}

	if err := s.WriteAtomic(ctx, e, report(AtomicResult{AuditID: 1, Status: AuditSuccess, Tool: e.Tool, Closed: true}, nil)); err != nil {
		t.Fatal(err)
	}
	// A row an earlier attempt closed as success: nothing closed now.
	if err := s.WriteAtomic(ctx, e, report(AtomicResult{AuditID: 1, Status: AuditSuccess, Tool: e.Tool}, nil)); err != nil {
		t.Fatal(err)
	}
	if len(counted) != 1 || counted[0] != "success" {
		t.Fatalf("counted %v, want one success", counted)
	}
	// The write found the row failed, or another tool's: CONFLICT, as
	// WritePending answers.
	err := s.WriteAtomic(ctx, e, report(AtomicResult{AuditID: 2, Status: AuditFailed, Tool: e.Tool}, nil))
	if toolkit.CodeOf(err) != toolkit.Conflict || !errors.Is(err, ErrAuditClosed) {
		t.Fatalf("failed row: %v", err)
	}
	err = s.WriteAtomic(ctx, e, report(AtomicResult{AuditID: 3, Status: AuditPending, Tool: "stripe.create_relink_url"}, nil))
	if toolkit.CodeOf(err) != toolkit.Conflict || errors.Is(err, ErrAuditClosed) {
		t.Fatalf("another tool's row: %v", err)
	}
	// The write's own error comes back as it is.
	boom := errors.New("conn closed")
	if err := s.WriteAtomic(ctx, e, report(AtomicResult{}, boom)); !errors.Is(err, boom) {
		t.Fatalf("write error: %v", err)
	}
	// An entry WritePending would refuse never reaches the write.
	bad := e
	bad.CorrelationID = "corr-1"
	never := func(context.Context, TwoPhaseRow) (AtomicResult, error) {
		t.Fatal("the write ran for an invalid entry")
		return AtomicResult{}, nil
	}
	if err := s.WriteAtomic(ctx, bad, never); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("invalid entry: %v", err)
	}
	bad = e
	bad.Action = ActionReject
	if err := s.WriteAtomic(ctx, bad, never); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("reject: %v", err)
	}
	if len(counted) != 1 {
		t.Fatalf("counted %v", counted)
	}
}
