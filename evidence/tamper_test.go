package evidence

import (
	"testing"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// seedChain records n snapshots of wf and returns their ids in chain order.
func seedChain(t *testing.T, s *Store, wf string, n int) []string {
	t.Helper()
	var ids []string
	for i := 1; i <= n; i++ {
		id, err := s.Record(ctxT(t), snapshot(t, wf, i, map[string]any{"step": i, "total_minor": 1000 * i}))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func verifyFirst(t *testing.T, s *Store, wf string) Problem {
	t.Helper()
	rep, err := s.Verify(ctxT(t), wf)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.First == nil {
		t.Fatalf("verify missed the tampering: %+v", rep)
	}
	t.Logf("verify: first problem %+v (%d in all)", *rep.First, len(rep.Problems))
	return *rep.First
}

func TestVerifyDetectsUpdatedHash(t *testing.T) {
	s, pool := newTestStore(t)
	ids := seedChain(t, s, "wf-upd", 4)
	testenv.SuperExec(t, pool, `UPDATE evidence_snapshots SET output_hash = 'sha256:' || repeat('a', 64) WHERE snapshot_id = $1`, ids[2])
	p := verifyFirst(t, s, "wf-upd")
	if p.SnapshotID != ids[2] || p.ChainSeq != 3 {
		t.Fatalf("first problem names %s (seq %d), want %s (seq 3)", p.SnapshotID, p.ChainSeq, ids[2])
	}
}

func TestVerifyDetectsEditedOutput(t *testing.T) {
	s, pool := newTestStore(t)
	ids := seedChain(t, s, "wf-out", 3)
	testenv.SuperExec(t, pool, `UPDATE evidence_snapshots SET output = '{"step":2,"total_minor":1}' WHERE snapshot_id = $1`, ids[1])
	p := verifyFirst(t, s, "wf-out")
	if p.SnapshotID != ids[1] || p.Kind != ProblemEditedOutput {
		t.Fatalf("first problem %+v, want edited output of %s", p, ids[1])
	}
}

func TestVerifyDetectsRewrittenChain(t *testing.T) {
	// A tamperer who edits a row and recomputes its content hash still
	// breaks the link to the next row.
	s, pool := newTestStore(t)
	ids := seedChain(t, s, "wf-chain", 3)
	testenv.SuperExec(t, pool, `UPDATE evidence_snapshots SET chain_hash = 'sha256:' || repeat('b', 64) WHERE snapshot_id = $1`, ids[0])
	p := verifyFirst(t, s, "wf-chain")
	if p.SnapshotID != ids[0] || p.Kind != ProblemBrokenLink {
		t.Fatalf("first problem %+v, want broken link at %s", p, ids[0])
	}
}

func TestVerifyDetectsDeletedRow(t *testing.T) {
	s, pool := newTestStore(t)
	ids := seedChain(t, s, "wf-del", 4)
	testenv.SuperExec(t, pool, `DELETE FROM evidence_snapshots WHERE snapshot_id = $1`, ids[1])
	p := verifyFirst(t, s, "wf-del")
	if p.Kind != ProblemMissingRow || p.ChainSeq != 2 {
		t.Fatalf("first problem %+v, want missing row 2", p)
	}
}

func TestVerifyDetectsDeletedTail(t *testing.T) {
	s, pool := newTestStore(t)
	ids := seedChain(t, s, "wf-tail", 3)
	testenv.SuperExec(t, pool, `DELETE FROM evidence_snapshots WHERE snapshot_id = $1`, ids[2])
	p := verifyFirst(t, s, "wf-tail")
	if p.Kind != ProblemTruncated || p.ChainSeq != 3 {
		t.Fatalf("first problem %+v, want truncated at 3", p)
	}
}
