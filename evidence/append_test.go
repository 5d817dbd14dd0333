package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestContentHashParts: the format-1 canonical form cut around chain_seq
// and joined again with any sequence number hashes to exactly contentHash,
// also when string fields spell the chain_seq key, escapes or non-ASCII
// text (what the format-1 functions relied on, and what verifying their
// rows still relies on).
func TestContentHashParts(t *testing.T) {
	tricky := sampleRecord()
	tricky.Tool, tricky.Build = `x"chain_seq":0,"a":"`, "\"chain_seq\":7 \u00e9\u4e2d\U0001F600 <&> \t\\"
	tricky.ActivityType, tricky.RulesetVersion = "chain_seq", "\x01\x1f"
	noRaw := sampleRecord()
	noRaw.rawCiphertext, noRaw.rawNonce, noRaw.RawKeyID, noRaw.HasRaw = nil, nil, "", false
	for name, base := range map[string]SnapshotRecord{"sample": sampleRecord(), "tricky": tricky, "no raw": noRaw} {
		head, tail, err := base.contentHashParts()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, seq := range []int64{1, 2, 9, 10, 99, 100, 101, 999, 1000, 12345, 1 << 31, 1 << 40, 1<<53 - 1} {
			r := base
			r.ChainSeq = seq
			want, err := r.contentHash()
			if err != nil {
				t.Fatal(err)
			}
			got := toolkit.HashBytes([]byte(string(head) + strconv.FormatInt(seq, 10) + string(tail)))
			if got != want {
				t.Errorf("%s, seq %d: parts hash to %s, contentHash is %s", name, seq, got, want)
			}
		}
	}
}

// TestAppendHashesMatchGo: the hashes evidence_append computes in SQL are
// the ones Go computes (contentHash, chainHash), row by row, over several
// interleaved chains with and without raw outputs and with awkward text.
func TestAppendHashesMatchGo(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := ctxT(t)
	const chains, perChain = 3, 40
	for i := 0; i < chains*perChain; i++ {
		wf := fmt.Sprintf("wf-hash-%d", i%chains)
		snap := snapshot(t, wf, i/chains+1, map[string]any{"i": i, "note": "caf\u00e9 \"q\" <&>"})
		snap.Build = fmt.Sprintf("b\u00e9\\%d\"chain_seq\":%d", i, i)
		if i%3 == 0 {
			snap.RawOutput = json.RawMessage(fmt.Sprintf(`{"i":%d,"email":"p%d@example.com"}`, i, i))
		}
		if i%4 == 0 {
			snap.TraceID = fmt.Sprintf("%032x", i+1)
		}
		if rec, err := s.RecordStep(ctx, snap); err != nil || rec.Reused {
			t.Fatalf("append %d: %+v %v", i, rec, err)
		}
	}
	for c := 0; c < chains; c++ {
		wf := fmt.Sprintf("wf-hash-%d", c)
		rows, err := s.chain(ctx, wf)
		if err != nil || len(rows) != perChain {
			t.Fatalf("%s: %d rows, %v", wf, len(rows), err)
		}
		prev := ""
		for i, r := range rows {
			content, err := r.contentHash()
			if err != nil {
				t.Fatal(err)
			}
			if r.ChainSeq != int64(i+1) || r.ContentHash != content || r.PrevChainHash != prev ||
				r.ChainHash != chainHash(prev, content) {
				t.Fatalf("%s row %d: seq %d content %s (Go %s) prev %q (want %q) chain %s (Go %s)", wf, i+1, r.ChainSeq,
					r.ContentHash, content, r.PrevChainHash, prev, r.ChainHash, chainHash(prev, content))
			}
			prev = r.ChainHash
		}
		if rep, err := s.Verify(ctx, wf); err != nil || !rep.OK {
			t.Fatalf("verify %s: %+v %v", wf, rep, err)
		}
	}
}

// TestAppendDatabaseDown: with the database unreachable an append fails as
// before, a retryable UPSTREAM_ERROR with upstream_code db_error.
func TestAppendDatabaseDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there any more: connections are refused
	pool, err := pgxpool.New(context.Background(), "postgres://u:p@"+addr+"/db?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c, _ := NewAESGCM("k", make([]byte, 32))
	s, _ := NewStore(pool, c, nil)
	s.SignWith(testSigner(t, WriterWorker))
	_, err = s.RecordStep(ctxT(t), snapshot(t, "wf-down", 1, map[string]any{"x": 1}))
	te := toolkit.AsError(err)
	if toolkit.CodeOf(err) != toolkit.UpstreamError || !te.CanRetry || te.Details["upstream_code"] != "db_error" ||
		!strings.Contains(te.Message, "database unavailable") {
		t.Fatalf("append with the database down: %v (%+v), want retryable UPSTREAM_ERROR db_error", err, te)
	}
}

// TestAppendConcurrentSameStep: writers racing on one chain, several of
// them for the same steps, leave one row per step, every writer of a step
// gets that row's id, exactly one of them wrote it, and the chain has no gap.
func TestAppendConcurrentSameStep(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	const steps, writersPerStep = 8, 4
	type result struct {
		step int
		rec  toolkit.Recorded
		err  error
	}
	results := make(chan result, steps*writersPerStep)
	var wg sync.WaitGroup
	for w := 0; w < writersPerStep; w++ {
		for step := 1; step <= steps; step++ {
			wg.Add(1)
			go func(step, w int) {
				defer wg.Done()
				// Each writer's answer differs (a re-run's new timestamp): the step, not the answer, is the key.
				snap := snapshot(t, "wf-race", step, map[string]any{"step": step, "writer": w})
				snap.Call.Attempt = int32(w + 1)
				rec, err := s.RecordStep(ctx, snap)
				results <- result{step, rec, err}
			}(step, w)
		}
	}
	wg.Wait()
	close(results)
	ids, written := map[int]string{}, map[int]int{}
	for r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if id, ok := ids[r.step]; ok && id != r.rec.SnapshotID {
			t.Fatalf("step %d got two snapshots: %s and %s", r.step, id, r.rec.SnapshotID)
		}
		ids[r.step] = r.rec.SnapshotID
		if !r.rec.Reused {
			written[r.step]++
		}
	}
	for step := 1; step <= steps; step++ {
		if written[step] != 1 {
			t.Errorf("step %d written %d times, want once", step, written[step])
		}
	}
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE chain_key = 'wf-race'`).Scan(&n)
	if rep, err := s.Verify(ctx, "wf-race"); n != steps || err != nil || !rep.OK || rep.Rows != steps {
		t.Fatalf("%d rows (want %d); verify %+v %v", n, steps, rep, err)
	}
}
