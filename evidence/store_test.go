package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func TestRecordReadVerify(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	wf := "draft-order/u1/k1"

	var ids []string
	for i := 1; i <= 3; i++ {
		snap := snapshot(t, wf, i, map[string]any{"n": i, "amount_minor": 1250})
		if i == 2 {
			snap.RawOutput = json.RawMessage(`{"n":2,"amount_minor":1250,"email":"jane@example.com"}`)
		}
		id, err := s.Record(ctx, snap)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !strings.HasPrefix(id, "ev_") || len(id) != 29 {
			t.Fatalf("snapshot id %q is not ev_ + 26 chars", id)
		}
		ids = append(ids, id)
	}

	got, err := s.Get(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if got.ChainSeq != 2 || got.Tool != "test.echo" || got.ActivityID != "2" || got.Attempt != 1 || !got.HasRaw ||
		got.RawKeyID != "test-1" || got.UserIDHash != HashUserID("user-42") || got.TTLSeconds != 300 {
		t.Fatalf("unexpected record: %+v", got)
	}
	want, _ := toolkit.CanonicalHash(json.RawMessage(`{"amount_minor":1250,"n":2}`))
	if got.OutputHash != want {
		t.Fatalf("output hash %s, want %s", got.OutputHash, want)
	}

	raw, err := s.ReadRaw(ctx, ids[1], "alice.support", "ticket 123: customer dispute")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "jane@example.com") {
		t.Fatalf("raw output not decrypted: %s", raw)
	}
	// A snapshot without raw output returns its (already clean) output.
	if raw, err := s.ReadRaw(ctx, ids[0], "alice.support", "audit"); err != nil || !strings.Contains(string(raw), `"n": 1`) && !strings.Contains(string(raw), `"n":1`) {
		t.Fatalf("read of clean snapshot: %s, %v", raw, err)
	}
	var logged int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM evidence_access_log WHERE reader = 'alice.support'`).Scan(&logged); err != nil || logged != 2 {
		t.Fatalf("access log rows = %d (%v), want 2", logged, err)
	}
	for _, bad := range [][2]string{{"", "why"}, {"who", " "}} {
		if _, err := s.ReadRaw(ctx, ids[1], bad[0], bad[1]); toolkit.CodeOf(err) != toolkit.InvalidArgument {
			t.Fatalf("ReadRaw(%q,%q) = %v, want INVALID_ARGUMENT", bad[0], bad[1], err)
		}
	}
	if _, err := s.ReadRaw(ctx, "ev_00000000000000000000000000", "who", "why"); toolkit.CodeOf(err) != toolkit.NotFound || !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadRaw of a missing id = %v, want NOT_FOUND", err)
	}

	rep, err := s.Verify(ctx, wf)
	if err != nil || !rep.OK || rep.Rows != 3 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	list, err := s.SnapshotsForWorkflow(ctx, wf)
	if err != nil || len(list) != 3 || list[0].SnapshotID != ids[0] || list[2].PrevChainHash != list[1].ChainHash {
		t.Fatalf("SnapshotsForWorkflow: %d rows, %v", len(list), err)
	}
}

func TestRecordIsIdempotent(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	snap := snapshot(t, "wf-idem", 1, map[string]any{"x": 1})
	first, err := s.Record(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	// The same attempt written again, and a later attempt with the same answer.
	again, err := s.Record(ctx, snap)
	if err != nil || again != first {
		t.Fatalf("retried write gave %s (%v), want %s", again, err, first)
	}
	snap.Call.Attempt = 2
	if id, err := s.Record(ctx, snap); err != nil || id != first {
		t.Fatalf("attempt 2 with the same output gave %s (%v), want %s", id, err, first)
	}
	// The same step answered differently (a local activity run again after
	// a lost workflow task: its output carries a new timestamp) gets the
	// first snapshot and its answer, not a second row.
	other := snapshot(t, "wf-idem", 1, map[string]any{"x": 2})
	other.Call.Attempt = 3
	rec, err := s.RecordStep(ctx, other)
	if err != nil || rec.SnapshotID != first || !rec.Reused {
		t.Fatalf("the same step with another output gave %+v (%v), want reuse of %s", rec, err, first)
	}
	if rec.OutputHash != snap.OutputHash || !jsonEqual(rec.Output, snap.Output) || rec.Status != toolkit.StatusOK {
		t.Fatalf("reuse answered %s %s, want the stored %s", rec.Output, rec.OutputHash, snap.Output)
	}
	// Another input is another step; a refusal of the step is its own row.
	next := snapshot(t, "wf-idem", 1, map[string]any{"x": 2})
	next.InputDigest = "sha256:" + strings.Repeat("e", 64)
	if id, err := s.Record(ctx, next); err != nil || id == first {
		t.Fatalf("another input reused %s (%v)", id, err)
	}
	refusal := snapshot(t, "wf-idem", 1, map[string]any{"code": "OUT_OF_STOCK"})
	refusal.Status = toolkit.StatusError
	if id, err := s.Record(ctx, refusal); err != nil || id == first {
		t.Fatalf("a refusal reused the answer %s (%v)", id, err)
	}
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = 'wf-idem'`).Scan(&n)
	if n != 3 {
		t.Fatalf("%d rows, want 3 (one per step)", n)
	}
}

// jsonEqual compares two JSON documents by their canonical hash (jsonb
// reorders keys).
func jsonEqual(a, b json.RawMessage) bool {
	ha, errA := toolkit.CanonicalHash(a)
	hb, errB := toolkit.CanonicalHash(b)
	return errA == nil && errB == nil && ha == hb
}

func TestRecordConcurrentChain(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.Record(ctx, snapshot(t, "wf-conc", i, map[string]any{"i": i}))
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Verify(ctx, "wf-conc")
	if err != nil || !rep.OK || rep.Rows != n {
		t.Fatalf("verify after concurrent writes: %+v, %v", rep, err)
	}
}

func TestRecordRejectsBadSnapshots(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	snap := snapshot(t, "wf-bad", 1, map[string]any{"x": 1})
	snap.OutputHash = "sha256:" + strings.Repeat("0", 64)
	if _, err := s.Record(ctx, snap); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("mismatched output hash: %v", err)
	}
	outside := snapshot(t, "", 1, map[string]any{"x": 1})
	outside.Call = toolkit.CallContext{}
	outside.RequestID = ""
	if _, err := s.Record(ctx, outside); toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("no workflow and no request id: %v", err)
	}
	outside.RequestID = "req-cli-1"
	a, err := s.Record(ctx, outside)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.Record(ctx, outside); err != nil || a != b {
		t.Fatalf("outside an activity the same request and tool gave %s and %s (%v)", a, b, err)
	}
}

func TestAppendOnly(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	id, err := s.Record(ctx, snapshot(t, "wf-ao", 1, map[string]any{"x": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadRaw(ctx, id, "bob.compliance", "append-only test"); err != nil {
		t.Fatal(err)
	}
	// The runtime role is refused by privilege; the owner, who holds every
	// privilege, still by the triggers (docs/evidence.md#append-only).
	owner, err := pgx.Connect(ctx, testenv.OwnerDSNFor(pool.Config().ConnString()))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	for _, sql := range []string{
		`UPDATE evidence_snapshots SET output_hash = output_hash WHERE snapshot_id = $1`,
		`DELETE FROM evidence_snapshots WHERE snapshot_id = $1`,
		`DELETE FROM evidence_access_log WHERE snapshot_id = $1`,
	} {
		if _, err := pool.Exec(ctx, sql, id); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("as the runtime role, %s: %v, want a privilege refusal", sql, err)
		}
		if _, err := owner.Exec(ctx, sql, id); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("as the owner, %s: %v, want append-only refusal", sql, err)
		}
	}
	for _, c := range []interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}{pool, owner} {
		if _, err := c.Exec(ctx, `TRUNCATE evidence_snapshots CASCADE`); err == nil {
			t.Fatal("TRUNCATE was allowed")
		}
	}
}

// GetMany reads several snapshots in one round trip, each as Get reads
// it; an id that names no row is absent.
func TestGetMany(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	var ids []string
	for i := 1; i <= 3; i++ {
		id, err := s.Record(ctx, snapshot(t, "draft-order/u1/many", i, map[string]any{"n": i}))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, err := s.GetMany(ctx, append(ids, "ev_00000000000000000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("GetMany found %d snapshots, want 3: %v", len(got), got)
	}
	for _, id := range ids {
		one, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if g := got[id]; g == nil || g.ChainHash != one.ChainHash || string(g.Output) != string(one.Output) || g.Tool != one.Tool {
			t.Fatalf("GetMany %s = %+v, Get = %+v", id, g, one)
		}
	}
	if none, err := s.GetMany(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("GetMany of nothing: %v, %v", none, err)
	}
}
