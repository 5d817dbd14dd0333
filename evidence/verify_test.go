package evidence

import (
	"fmt"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// linkedRows is a sound chain of n format-2 rows, hashed and linked as the
// store and evidence_append_row do, and its head.
func linkedRows(t *testing.T, n int) ([]*SnapshotRecord, *chainHead) {
	t.Helper()
	var rows []*SnapshotRecord
	prev := ""
	for i := 1; i <= n; i++ {
		r := sampleRecord()
		r.SnapshotID, r.ChainSeq, r.HashFormat = fmt.Sprintf("ev_%02d", i), int64(i), hashFormatContentOnly
		var err error
		if r.OutputHash, err = toolkit.CanonicalHash(r.Output); err != nil {
			t.Fatal(err)
		}
		if r.ContentHash, err = r.contentHash(); err != nil {
			t.Fatal(err)
		}
		r.PrevChainHash, r.ChainHash = prev, chainHash(prev, r.ContentHash)
		prev = r.ChainHash
		rows = append(rows, &r)
	}
	return rows, &chainHead{seq: int64(n), hash: prev}
}

func verified(rows []*SnapshotRecord, head *chainHead) VerifyReport {
	rep := VerifyReport{OK: true}
	verifyChain(&rep, rows, head, authorship{since: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}) // rows from before signing
	return rep
}

// TestVerifyChainPlacesFormat2Rows: format 2 does not hash chain_seq, so
// verify checks what stands in for it. A sound chain verifies; a row moved
// to another seq, two rows swapped, a repeated seq, and a row past the head
// (a forged tail whose every hash is right) are each found.
func TestVerifyChainPlacesFormat2Rows(t *testing.T) {
	rows, head := linkedRows(t, 4)
	if rep := verified(rows, head); !rep.OK || rep.Rows != 4 {
		t.Fatalf("a sound chain: %+v", rep)
	}
	for name, c := range map[string]struct {
		tamper func(rows []*SnapshotRecord, head *chainHead) []*SnapshotRecord
		kind   string
	}{
		"middle row moved past the end": {func(rows []*SnapshotRecord, head *chainHead) []*SnapshotRecord {
			moved := rows[1]
			moved.ChainSeq, head.seq = 5, 5
			return []*SnapshotRecord{rows[0], rows[2], rows[3], moved}
		}, ProblemMissingRow},
		"two rows swapped": {func(rows []*SnapshotRecord, _ *chainHead) []*SnapshotRecord {
			rows[1].ChainSeq, rows[2].ChainSeq = 3, 2
			return []*SnapshotRecord{rows[0], rows[2], rows[1], rows[3]}
		}, ProblemBrokenLink},
		"last row moved up, head patched": {func(rows []*SnapshotRecord, head *chainHead) []*SnapshotRecord {
			rows[3].ChainSeq, head.seq = 5, 5
			return rows
		}, ProblemMissingRow},
		"seq repeated": {func(rows []*SnapshotRecord, _ *chainHead) []*SnapshotRecord {
			rows[2].ChainSeq = 2
			return rows
		}, ProblemBrokenLink},
		"row past the head": {func(rows []*SnapshotRecord, head *chainHead) []*SnapshotRecord {
			more, _ := linkedRows(t, 5)
			head.seq, head.hash = 4, rows[3].ChainHash
			return append(rows, more[4])
		}, ProblemBrokenLink},
	} {
		rows, head := linkedRows(t, 4)
		rep := verified(c.tamper(rows, head), head)
		if rep.OK || rep.First == nil || rep.First.Kind != c.kind {
			t.Errorf("%s: %+v, want first problem %s", name, rep, c.kind)
			continue
		}
		t.Logf("%s: %+v", name, *rep.First)
	}
}
