package evidence

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// formats reads wf's rows' hash formats in chain order.
func formats(t *testing.T, s *Store, wf string) []int {
	t.Helper()
	rows, err := s.chain(ctxT(t), wf)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, r := range rows {
		out = append(out, r.HashFormat)
	}
	return out
}

// TestFormat1RowsStillVerify: rows written by the format-1 evidence_append,
// as a build from before format 2 wrote them while it drained (migration
// 00250 has since dropped the function), verify with the format-1 formula,
// in one chain with format-2 rows of single and batched appends between
// them; a step the format-1 function recorded is adopted by a format-2
// append; a format-1 row with a changed seq is found.
func TestFormat1RowsStillVerify(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	// The rows stand for rows written before signing began: unsigned rows
	// after it are named (TestAttackForgedRowsThroughAppendFunctions).
	signingBeganLater(t, pool)
	restoreFormat1Append(ctx, t, pool)
	const wf = "wf-drain"
	step := 0
	next := func() toolkit.Snapshot {
		step++
		snap := snapshot(t, wf, step, map[string]any{"step": step, "note": "caf\u00e9 \"chain_seq\":1"})
		if step%2 == 1 {
			snap.RawOutput = json.RawMessage(fmt.Sprintf(`{"step":%d,"email":"p%d@example.com"}`, step, step))
		}
		return snap
	}
	old := func() string {
		id, reused := appendFormat1(ctx, t, s, next())
		if reused {
			t.Fatal("a new step reused a row")
		}
		return id
	}
	first := old()
	old()
	if _, err := s.RecordStep(ctx, next()); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitSteps(ctx, stageAll(t, s, next(), next())); err != nil {
		t.Fatal(err)
	}
	old()
	if _, err := s.RecordStep(ctx, next()); err != nil {
		t.Fatal(err)
	}
	checkChain(t, s, wf, 7)
	if got, want := fmt.Sprint(formats(t, s, wf)), "[1 1 3 3 3 1 3]"; got != want {
		t.Fatalf("hash formats %s, want %s", got, want)
	}
	if raw, err := s.ReadRaw(ctx, first, "test", "format-1 raw output"); err != nil || !json.Valid(raw) {
		t.Fatalf("read raw of a format-1 row: %s %v", raw, err)
	}
	// The first step again, now through the format-2 append: the stored row.
	again := snapshot(t, wf, 1, map[string]any{"step": 1, "later": true})
	if rec, err := s.RecordStep(ctx, again); err != nil || !rec.Reused || rec.SnapshotID != first {
		t.Fatalf("step 1 again: %+v %v, want %s reused", rec, err, first)
	}

	// Format 1 hashes chain_seq: its last row moved to seq 8 is an edited
	// row, besides the gap it leaves.
	testenv.SuperExec(t, pool, `UPDATE evidence_snapshots SET chain_seq = 8 WHERE chain_key = $1 AND chain_seq = 6`, wf)
	if rep, err := s.Verify(ctx, wf); err != nil || rep.OK || !hasProblem(rep, ProblemEditedRow, 8) {
		t.Fatalf("format-1 row moved: %+v %v, want edited_row at 8", rep, err)
	}
}

func hasProblem(rep VerifyReport, kind string, seq int64) bool {
	for _, p := range rep.Problems {
		if p.Kind == kind && p.ChainSeq == seq {
			return true
		}
	}
	return false
}

// TestVerifyDetectsEditedFormat2Row: a format-2 row whose content, whose
// place in the chain, or whose format marker is changed (triggers off, as
// the table's owner could) is found, though its content hash does not
// cover chain_seq.
func TestVerifyDetectsEditedFormat2Row(t *testing.T) {
	s, pool := newTestStore(t)
	for name, c := range map[string]struct {
		tamper []string // run in order, $1 the chain
		kind   string
		seq    int64
	}{
		"content": {[]string{`UPDATE evidence_snapshots SET tool = 'forged.tool' WHERE chain_key = $1 AND chain_seq = 2`},
			ProblemEditedRow, 2},
		"format marker": {[]string{`UPDATE evidence_snapshots SET hash_format = 1 WHERE chain_key = $1 AND chain_seq = 2`},
			ProblemEditedRow, 2},
		"middle row moved past the end, head patched": {[]string{
			`UPDATE evidence_snapshots SET chain_seq = 5 WHERE chain_key = $1 AND chain_seq = 2`,
			`UPDATE evidence_chain_heads SET last_seq = 5 WHERE chain_key = $1`}, ProblemMissingRow, 2},
		"two rows swapped": {[]string{
			`UPDATE evidence_snapshots SET chain_seq = 100 WHERE chain_key = $1 AND chain_seq = 2`,
			`UPDATE evidence_snapshots SET chain_seq = 2 WHERE chain_key = $1 AND chain_seq = 3`,
			`UPDATE evidence_snapshots SET chain_seq = 3 WHERE chain_key = $1 AND chain_seq = 100`}, ProblemBrokenLink, 2},
		"last row moved up, head patched": {[]string{
			`UPDATE evidence_snapshots SET chain_seq = 5 WHERE chain_key = $1 AND chain_seq = 4`,
			`UPDATE evidence_chain_heads SET last_seq = 5 WHERE chain_key = $1`}, ProblemMissingRow, 4},
	} {
		wf := "wf-v2-" + name
		seedChain(t, s, wf, 4)
		if got := fmt.Sprint(formats(t, s, wf)); got != "[3 3 3 3]" {
			t.Fatalf("%s: hash formats %s, want format 3 (format 2, signed)", name, got)
		}
		for _, q := range c.tamper {
			testenv.SuperExec(t, pool, q, wf)
		}
		p := verifyFirst(t, s, wf)
		if p.Kind != c.kind || p.ChainSeq != c.seq {
			t.Errorf("%s: first problem %+v, want %s at %d", name, p, c.kind, c.seq)
		}
	}
}

// TestAttackAppendRowForgesChainColumns: the runtime role calls
// evidence_append_row itself with a row that names its own chain place,
// links, format and time; the function writes its own, so the row lands
// after the chain's last one and verifies, whatever the caller claimed.
func TestAttackAppendRowForgesChainColumns(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	const wf = "wf-forge"
	seedChain(t, s, wf, 2)
	st, err := s.stage(snapshot(t, wf, 3, map[string]any{"step": 3}))
	if err != nil {
		t.Fatal(err)
	}
	row, err := json.Marshal(st.row())
	if err != nil {
		t.Fatal(err)
	}
	var forged map[string]any
	_ = json.Unmarshal(row, &forged)
	forged["chain_seq"], forged["hash_format"], forged["recorded_at"] = 1, 1, "2001-01-01T00:00:00Z"
	forged["prev_chain_hash"], forged["chain_hash"] = "", "sha256:"+fmt.Sprintf("%064d", 0)
	row, _ = json.Marshal(forged)
	var seq int64
	var reused bool
	if err := pool.QueryRow(ctx, `SELECT r_reused, r_chain_seq FROM evidence_append_row($1, $2)`, lockClass, string(row)).
		Scan(&reused, &seq); err != nil || reused || seq != 3 {
		t.Fatalf("append: seq %d reused %v %v, want a new row 3", seq, reused, err)
	}
	rows := checkChain(t, s, wf, 3)
	if r := rows[2]; r.HashFormat != hashFormatSigned || r.RecordedAt.Year() < 2026 || r.SnapshotID != st.r.SnapshotID {
		t.Fatalf("the row written: %+v", r)
	}
}

// signingBeganLater moves the moment rows began to be signed a day ahead,
// as the owner could: every row written now stands for one written before
// signing (docs/evidence.md#row-signatures).
func signingBeganLater(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	testenv.SuperExec(t, pool, `UPDATE evidence_row_signing SET since = now() + interval '1 day'`)
}
