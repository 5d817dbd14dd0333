package evidence

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Problem kinds Verify reports.
const (
	ProblemMissingRow   = "missing_row"   // a chain sequence number has no row (deleted)
	ProblemEditedRow    = "edited_row"    // a row's content no longer matches its content hash
	ProblemEditedOutput = "edited_output" // a row's output no longer matches its output hash
	ProblemBrokenLink   = "broken_link"   // prev_chain_hash or chain_hash does not follow the chain
	ProblemTruncated    = "truncated"     // the chain head names rows that are gone (deleted tail)
	// ProblemUnsigned and ProblemBadSignature: authorship.go.
)

// Problem is one defect Verify found, naming the row.
type Problem struct {
	Kind       string `json:"kind"`
	ChainSeq   int64  `json:"chain_seq"`
	SnapshotID string `json:"snapshot_id,omitempty"`
	Detail     string `json:"detail"`
}

// VerifyReport is the result of walking one workflow's chain.
type VerifyReport struct {
	WorkflowID string `json:"workflow_id"`
	Rows       int    `json:"rows"`
	OK         bool   `json:"ok"`
	// First is the first defect in chain order; Problems lists them all.
	First    *Problem  `json:"first,omitempty"`
	Problems []Problem `json:"problems,omitempty"`
}

func (v *VerifyReport) add(p Problem) {
	v.Problems = append(v.Problems, p)
	if v.First == nil {
		first := p
		v.First = &first
	}
	v.OK = false
}

// Verify walks a workflow's chain and reports every missing sequence
// number, edited row, edited output and broken link, the first of them
// named in First. An empty chain is OK. The error is only for failing to
// read.
func (s *Store) Verify(ctx context.Context, workflowID string) (VerifyReport, error) {
	rep := VerifyReport{WorkflowID: workflowID, OK: true}
	rows, err := s.chain(ctx, workflowID)
	if err != nil {
		return rep, err
	}
	auth, err := s.authorship(ctx)
	if err != nil {
		return rep, err
	}
	var head *chainHead
	var h chainHead
	err = s.pool.QueryRow(ctx, `SELECT last_seq, last_hash FROM evidence_chain_heads WHERE chain_key = $1`, workflowID).
		Scan(&h.seq, &h.hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return rep, dbError("read chain head", err)
	default:
		head = &h
	}
	verifyChain(&rep, rows, head, auth)
	return rep, nil
}

// chainHead is a chain's row in evidence_chain_heads.
type chainHead struct {
	seq  int64
	hash string
}

// verifyChain checks one chain's rows (in chain order) and its head (nil:
// none) into rep: every missing sequence number, edited row, edited output
// and broken link. Each row's content hash is recomputed in its own hash
// format (docs/evidence.md#hash-chain). Format 2 does not hash chain_seq,
// so what places a row is checked here for every format: the seqs run
// 1..n without a gap or a repeat, each row's prev_chain_hash is the
// chain_hash of the row before it (the first's is empty), and the head
// names the last row and its hash. Each row's author is checked with auth
// (unsigned_row, bad_signature: docs/evidence.md#row-signatures).
func verifyChain(rep *VerifyReport, rows []*SnapshotRecord, head *chainHead, auth authorship) {
	rep.Rows = len(rows)
	prevHash, wantSeq := "", int64(1)
	for _, r := range rows {
		switch {
		case r.ChainSeq > wantSeq:
			rep.add(Problem{Kind: ProblemMissingRow, ChainSeq: wantSeq,
				Detail: fmt.Sprintf("rows %d..%d are missing before %s", wantSeq, r.ChainSeq-1, r.SnapshotID)})
		case r.ChainSeq < wantSeq:
			rep.add(Problem{Kind: ProblemBrokenLink, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID,
				Detail: fmt.Sprintf("chain_seq %d repeats or goes back after row %d", r.ChainSeq, wantSeq-1)})
		}
		wantSeq = max(wantSeq, r.ChainSeq+1)
		if h, err := r.StoredOutputHash(); err != nil || h != r.OutputHash {
			rep.add(Problem{Kind: ProblemEditedOutput, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID,
				Detail: fmt.Sprintf("output hashes to %s, row says %s", h, r.OutputHash)})
		}
		if h, err := r.contentHash(); err != nil || h != r.ContentHash {
			rep.add(Problem{Kind: ProblemEditedRow, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID,
				Detail: fmt.Sprintf("content hashes to %s, row says %s", h, r.ContentHash)})
		}
		if kind, detail := auth.check(r); kind != "" {
			rep.add(Problem{Kind: kind, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID, Detail: detail})
		}
		if r.PrevChainHash != prevHash {
			rep.add(Problem{Kind: ProblemBrokenLink, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID,
				Detail: fmt.Sprintf("prev_chain_hash %s does not match the previous row's chain_hash %s", r.PrevChainHash, prevHash)})
		}
		if want := chainHash(r.PrevChainHash, r.ContentHash); r.ChainHash != want {
			rep.add(Problem{Kind: ProblemBrokenLink, ChainSeq: r.ChainSeq, SnapshotID: r.SnapshotID,
				Detail: fmt.Sprintf("chain_hash %s, recomputed %s", r.ChainHash, want)})
		}
		prevHash = r.ChainHash
	}
	switch {
	case head == nil:
		if len(rows) > 0 {
			rep.add(Problem{Kind: ProblemTruncated, Detail: "the chain has rows but no head"})
		}
	case head.seq >= wantSeq:
		rep.add(Problem{Kind: ProblemTruncated, ChainSeq: wantSeq,
			Detail: fmt.Sprintf("the head names row %d, the last row present is %d", head.seq, wantSeq-1)})
	case head.seq < wantSeq-1:
		// The head only moves forward and is read after the rows, so a
		// row past it was not appended by the append functions.
		rep.add(Problem{Kind: ProblemBrokenLink, ChainSeq: head.seq + 1,
			Detail: fmt.Sprintf("the head names row %d, but rows run to %d", head.seq, wantSeq-1)})
	case head.seq == wantSeq-1 && head.hash != prevHash:
		rep.add(Problem{Kind: ProblemBrokenLink, ChainSeq: head.seq,
			Detail: fmt.Sprintf("the head's hash %s is not the last row's chain_hash %s", head.hash, prevHash)})
	}
}
