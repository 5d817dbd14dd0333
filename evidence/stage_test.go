package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// stage stages snaps in s, failing the test on error.
func stageAll(t *testing.T, s *Store, snaps ...toolkit.Snapshot) []toolkit.Staged {
	t.Helper()
	var out []toolkit.Staged
	for _, snap := range snaps {
		st, err := s.StageStep(snap)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

// checkChain asserts wf's chain has n rows, each hashed as Go hashes it,
// linked, and that Verify accepts it.
func checkChain(t *testing.T, s *Store, wf string, n int) []*SnapshotRecord {
	t.Helper()
	ctx := ctxT(t)
	rows, err := s.chain(ctx, wf)
	if err != nil || len(rows) != n {
		t.Fatalf("%s: %d rows, want %d (%v)", wf, len(rows), n, err)
	}
	prev := ""
	for i, r := range rows {
		content, err := r.contentHash()
		if err != nil {
			t.Fatal(err)
		}
		if r.ChainSeq != int64(i+1) || r.ContentHash != content || r.PrevChainHash != prev || r.ChainHash != chainHash(prev, content) {
			t.Fatalf("%s row %d: seq %d content %s (Go %s) prev %q (want %q)", wf, i+1, r.ChainSeq, r.ContentHash, content, r.PrevChainHash, prev)
		}
		prev = r.ChainHash
	}
	if rep, err := s.Verify(ctx, wf); err != nil || !rep.OK || rep.Rows != n {
		t.Fatalf("verify %s: %+v %v", wf, rep, err)
	}
	return rows
}

// TestBatchInterleavedWithSingleAppends: chains written by committed
// batches (one of them spanning two chains, rows interleaved, with raw
// outputs and trace ids) between single appends hash as Go hashes, link,
// and verify; the rows carry the staged snapshot ids in staging order.
func TestBatchInterleavedWithSingleAppends(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	step := 0
	next := func(wf string) toolkit.Snapshot {
		step++
		snap := snapshot(t, wf, step, map[string]any{"step": step, "note": "caf\u00e9 \"chain_seq\":1"})
		if step%2 == 0 {
			snap.RawOutput = json.RawMessage(fmt.Sprintf(`{"step":%d,"email":"p%d@example.com"}`, step, step))
		}
		if step%3 == 0 {
			snap.TraceID = fmt.Sprintf("%032x", step)
		}
		return snap
	}
	var want []string // wf-bi-a's snapshot ids in chain order
	single := func(wf string) {
		rec, err := s.RecordStep(ctx, next(wf))
		if err != nil || rec.Reused {
			t.Fatalf("single append: %+v %v", rec, err)
		}
		if wf == "wf-bi-a" {
			want = append(want, rec.SnapshotID)
		}
	}
	batch := func(wfs ...string) {
		var snaps []toolkit.Snapshot
		for _, wf := range wfs {
			snaps = append(snaps, next(wf))
		}
		staged := stageAll(t, s, snaps...)
		if err := s.CommitSteps(ctx, staged); err != nil {
			t.Fatal(err)
		}
		for i, st := range staged {
			if wfs[i] == "wf-bi-a" {
				want = append(want, st.SnapshotID())
			}
		}
	}
	single("wf-bi-a")
	batch("wf-bi-a", "wf-bi-a", "wf-bi-a", "wf-bi-a", "wf-bi-a")
	single("wf-bi-a")
	batch("wf-bi-b", "wf-bi-a", "wf-bi-b", "wf-bi-a")
	single("wf-bi-b")
	batch("wf-bi-a")
	rows := checkChain(t, s, "wf-bi-a", len(want))
	for i, r := range rows {
		if r.SnapshotID != want[i] {
			t.Fatalf("row %d is %s, want %s", i+1, r.SnapshotID, want[i])
		}
	}
	checkChain(t, s, "wf-bi-b", 3)
	// A staged raw output is sealed for its snapshot id like a recorded one.
	raw, err := s.ReadRaw(ctx, want[2], "test", "batch raw output")
	if err != nil || !json.Valid(raw) {
		t.Fatalf("read raw of a batched row: %s %v", raw, err)
	}
}

// TestBatchStepRecordedWritesNothing: a batch one of whose steps already
// holds a snapshot (or that holds one step twice) writes nothing and fails
// matching toolkit.ErrStepRecorded; the chain and its head are untouched.
func TestBatchStepRecordedWritesNothing(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	const wf = "wf-bs"
	first, err := s.RecordStep(ctx, snapshot(t, wf, 2, map[string]any{"v": 1}))
	if err != nil {
		t.Fatal(err)
	}
	head := func() string {
		var h string
		if err := pool.QueryRow(ctx, `SELECT last_seq || ' ' || last_hash FROM evidence_chain_heads WHERE chain_key = $1`, wf).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := head()
	for name, snaps := range map[string][]toolkit.Snapshot{
		"stored step": {snapshot(t, wf, 1, map[string]any{"v": 2}), snapshot(t, wf, 2, map[string]any{"v": 3}),
			snapshot(t, wf, 3, map[string]any{"v": 4})},
		"step twice": {snapshot(t, wf, 4, map[string]any{"v": 5}), snapshot(t, wf, 4, map[string]any{"v": 6})},
	} {
		err := s.CommitSteps(ctx, stageAll(t, s, snaps...))
		if !errors.Is(err, toolkit.ErrStepRecorded) || toolkit.AsError(err).Code != toolkit.Conflict {
			t.Fatalf("%s: %v, want ErrStepRecorded", name, err)
		}
		if rows := checkChain(t, s, wf, 1); rows[0].SnapshotID != first.SnapshotID || head() != before {
			t.Fatalf("%s: the chain changed", name)
		}
	}
	// The caller's way out: the calls again without a batch; the stored step adopts.
	rec, err := s.RecordStep(ctx, snapshot(t, wf, 2, map[string]any{"v": 3}))
	if err != nil || !rec.Reused || rec.SnapshotID != first.SnapshotID {
		t.Fatalf("the stored step: %+v %v", rec, err)
	}
	if err := s.CommitSteps(ctx, nil); err != nil {
		t.Fatalf("an empty commit: %v", err)
	}
	other, _ := newTestStore(t)
	if err := s.CommitSteps(ctx, stageAll(t, other, snapshot(t, wf, 9, 1))); toolkit.AsError(err).Code != toolkit.UpstreamError {
		t.Fatalf("a step another store staged: %v", err)
	}
}

// TestBatchConcurrentChains: batches of the same chains (in either order)
// and single appends racing leave every chain gap-free and valid, and no
// deadlock.
func TestBatchConcurrentChains(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	const writers, perBatch = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*3)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			var snaps []toolkit.Snapshot
			for i := 0; i < perBatch; i++ {
				wf := "wf-cc-a"
				if (i+w)%2 == 1 {
					wf = "wf-cc-b" // even writers start with a, odd ones with b
				}
				snaps = append(snaps, snapshot(t, wf, 100*w+i, map[string]any{"w": w, "i": i}))
			}
			staged := make([]toolkit.Staged, 0, perBatch)
			for _, snap := range snaps {
				st, err := s.StageStep(snap)
				if err != nil {
					errs <- err
					return
				}
				staged = append(staged, st)
			}
			errs <- s.CommitSteps(ctx, staged)
		}(w)
		go func(w int) {
			defer wg.Done()
			_, err := s.RecordStep(ctx, snapshot(t, "wf-cc-a", 10000+w, map[string]any{"single": w}))
			errs <- err
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := 0, 0
	for w := 0; w < writers; w++ {
		for i := 0; i < perBatch; i++ {
			if (i+w)%2 == 1 {
				b++
			} else {
				a++
			}
		}
	}
	checkChain(t, s, "wf-cc-a", a+writers)
	checkChain(t, s, "wf-cc-b", b)
}

// TestBatchEnvelopesThroughInvoker: through the invoker, staged calls
// answer the envelopes recorded calls do (but for the snapshot id and the
// call's time), name the rows the commit writes, and a later unbatched call
// of the same step reuses that row.
func TestBatchEnvelopesThroughInvoker(t *testing.T) {
	s, _ := newTestStore(t)
	inv := testInvoker(t, s, fixedAnswer(map[string]any{"price": 12, "note": "mail jane@example.com"}))
	call := func(b *toolkit.Batch, wf string, n int) *toolkit.Response {
		ctx := toolkit.WithCall(ctxT(t), toolkit.CallContext{WorkflowID: wf, RunID: "run-1", ActivityID: "5", ActivityType: "Quote", Attempt: 1})
		resp, err := inv.InvokeIn(ctx, b, testTool, testRequest("req-"+wf), map[string]any{"n": n})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	shape := func(r *toolkit.Response) string {
		c := *r
		ev := *c.Evidence
		ev.Sources = append([]toolkit.Source(nil), ev.Sources...)
		ev.SnapshotID, ev.Sources[0].TS = "", ""
		c.Evidence, c.Meta.DurationMS = &ev, 0
		b, _ := json.Marshal(c)
		return string(b)
	}
	ctx := ctxT(t)
	b := inv.NewBatch()
	if b == nil {
		t.Fatal("the evidence store cannot stage")
	}
	var staged []*toolkit.Response
	for n := 1; n <= 5; n++ {
		direct, batched := call(nil, "wf-env-direct", n), call(b, "wf-env-batch", n)
		if shape(direct) != shape(batched) {
			t.Fatalf("call %d staged:\n %s\nrecorded:\n %s", n, shape(batched), shape(direct))
		}
		staged = append(staged, batched)
	}
	if rows, _ := s.chain(ctx, "wf-env-batch"); len(rows) != 0 {
		t.Fatalf("%d rows written before the commit", len(rows))
	}
	if err := inv.CommitBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	rows := checkChain(t, s, "wf-env-batch", 5)
	for i, r := range rows {
		ev := staged[i].Evidence
		if r.SnapshotID != ev.SnapshotID || r.OutputHash != ev.Sources[0].Hash ||
			r.CreatedAt.Format("2006-01-02T15:04:05.000000Z") != mustTime(t, ev.Sources[0].TS) {
			t.Fatalf("row %d %s %s %s, envelope %+v", i+1, r.SnapshotID, r.OutputHash, r.CreatedAt, ev)
		}
		if again := call(nil, "wf-env-batch", i+1); again.SnapshotID() != r.SnapshotID {
			t.Fatalf("call %d again names %s, want the batch's %s", i+1, again.SnapshotID(), r.SnapshotID)
		}
	}
	// Staged again after the commit: the steps exist, nothing is written.
	b2 := inv.NewBatch()
	call(b2, "wf-env-batch", 1)
	call(b2, "wf-env-batch", 6)
	if err := inv.CommitBatch(ctx, b2); !errors.Is(err, toolkit.ErrStepRecorded) {
		t.Fatalf("commit of a step already recorded: %v", err)
	}
	checkChain(t, s, "wf-env-batch", 5)
}

// mustTime is an envelope's RFC 3339 time as the store keeps it (microseconds).
func mustTime(t *testing.T, ts string) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
}
