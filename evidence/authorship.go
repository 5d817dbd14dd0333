package evidence

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Problem kinds of a row's authorship (docs/evidence.md#row-signatures).
const (
	// ProblemUnsigned: a row of hash format 1 or 2, which carry no
	// signature, recorded after rows began to be signed: written through an
	// append function by someone without a writer's key (or by a build from
	// before signing, still draining).
	ProblemUnsigned = "unsigned_row"
	// ProblemBadSignature: a signed row whose signature does not verify
	// under the key it names, whose key is unknown, or whose key's writer
	// may not write such a row.
	ProblemBadSignature = "bad_signature"
)

// signingSince caches when rows began to be signed: the time migration
// 00240 recorded in evidence_row_signing, which never changes.
type signingSince struct {
	mu sync.Mutex
	at *time.Time
}

// signingSince reads (once) since when every row must be signed.
func (s *Store) signingSince(ctx context.Context) (time.Time, error) {
	s.since.mu.Lock()
	defer s.since.mu.Unlock()
	if s.since.at != nil {
		return *s.since.at, nil
	}
	var at time.Time
	if err := s.pool.QueryRow(ctx, `SELECT since FROM evidence_row_signing`).Scan(&at); err != nil {
		return time.Time{}, dbError("read since when rows are signed", err)
	}
	at = at.UTC()
	s.since.at = &at
	return at, nil
}

// authorship is what a row's author is checked with: the writers' public
// keys and since when rows must be signed.
type authorship struct {
	keys  *RowKeys
	since time.Time
}

func (s *Store) authorship(ctx context.Context) (authorship, error) {
	since, err := s.signingSince(ctx)
	return authorship{keys: s.keys, since: since}, err
}

// check names what is wrong with r's author ("" when nothing): a signed row
// must verify under a configured key whose writer may write it (the
// gateway writes direct calls' rows only); an unsigned one must have been
// recorded before rows were signed. The content hash the signature signs
// is checked beside (edited_row).
func (a authorship) check(r *SnapshotRecord) (kind, detail string) {
	if r.HashFormat != hashFormatSigned {
		if !r.RecordedAt.Before(a.since) {
			return ProblemUnsigned, fmt.Sprintf("hash format %d row (no signature) recorded at %s, after rows began to be signed at %s",
				r.HashFormat, r.RecordedAt.Format(time.RFC3339Nano), a.since.Format(time.RFC3339Nano))
		}
		return "", ""
	}
	writer, why := a.keys.verify(r.SignerKeyID, r.RowSignature, evidenceRowMessage(r.ContentHash))
	switch {
	case why != "":
		return ProblemBadSignature, why
	case writer == WriterGateway && !isDirect(r):
		return ProblemBadSignature, fmt.Sprintf("gateway key %q signed a row that is not a direct call's", r.SignerKeyID)
	}
	return "", ""
}

// CheckWrittenByWorker names what is wrong with a row a write is about to
// rest on ("" when nothing): its output and content must hash as the row
// says, and it must carry a signature of a cartwright worker's key this
// store knows. A row the runtime login appended itself (signed by a key
// of its own, unsigned, or a genuine signature moved onto other content)
// is refused before its content counts (docs/quote-seals.md#what-the-write-checks).
// A store that neither signs nor verifies (an in-memory test stack)
// checks nothing.
func (s *Store) CheckWrittenByWorker(ctx context.Context, r *SnapshotRecord) (kind, detail string, err error) {
	if s.keys == nil {
		return "", "", nil
	}
	if r.HashFormat != hashFormatSigned {
		// A row from before signing (an order quoted by the build before,
		// still draining) is its chain's to vouch for, as verify does.
		auth, err := s.authorship(ctx)
		if err != nil {
			return "", "", err
		}
		kind, detail := auth.check(r)
		return kind, detail, nil
	}
	if h, herr := r.StoredOutputHash(); herr != nil || h != r.OutputHash {
		return ProblemEditedOutput, fmt.Sprintf("output hashes to %s, row says %s", h, r.OutputHash), nil
	}
	if h, herr := r.contentHash(); herr != nil || h != r.ContentHash {
		return ProblemEditedRow, fmt.Sprintf("content hashes to %s, row says %s", h, r.ContentHash), nil
	}
	writer, why := s.keys.verify(r.SignerKeyID, r.RowSignature, evidenceRowMessage(r.ContentHash))
	switch {
	case why != "":
		return ProblemBadSignature, why, nil
	case writer != WriterWorker:
		return ProblemBadSignature, fmt.Sprintf("%s key %q signed it, not a worker's", writer, r.SignerKeyID), nil
	}
	return "", "", nil
}
