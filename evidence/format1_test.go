package evidence

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// What a build from before hash format 2 did, kept here to show that its
// rows, which stay in every database that had them, keep verifying
// (docs/evidence.md#content-hash-formats).

// format1Append is the signature of the format-1 evidence_append.
const format1Append = `evidence_append(integer, text, text, text, text, text, text, text, text, text, text, integer,
	text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text, timestamptz, text, bytea, bytea)`

// restoreFormat1Append re-creates, in this test's own database, the
// format-1 evidence_append as migration 00080 made it and 00100 handed it
// to the owner, so the test can write rows as a build from before format 2
// wrote them; migration 00250 dropped it once those builds had drained.
func restoreFormat1Append(ctx context.Context, t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	raw, err := os.ReadFile("../internal/db/migrations/00080_evidence_append.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, up, _ := strings.Cut(string(raw), "-- +goose StatementBegin")
	up, _, _ = strings.Cut(up, "-- +goose StatementEnd")
	owner, err := pgx.Connect(ctx, testenv.OwnerDSNFor(pool.Config().ConnString()))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	for _, stmt := range []string{up, "ALTER FUNCTION " + format1Append + " SECURITY DEFINER SET search_path = public, pg_temp"} {
		if _, err := owner.Exec(ctx, stmt); err != nil {
			t.Fatalf("restore the format-1 append: %v", err)
		}
	}
}

// seqKey is how the canonical form writes the chain_seq key. Outside a
// string a quote is a delimiter and inside one it is escaped, so these
// bytes can only be the top-level key (the view has no nested objects).
const seqKey = `"chain_seq":`

// contentHashParts is r's format-1 canonical content cut around the
// chain_seq value, as that build sent it to evidence_append (migration
// 00080): contentHash = HashBytes(head + decimal(chain_seq) + tail).
func (r *SnapshotRecord) contentHashParts() (head, tail []byte, err error) {
	v := *r
	v.HashFormat, v.ChainSeq = hashFormatSeqInContent, 0
	view, err := v.contentView()
	if err != nil {
		return nil, nil, err
	}
	c, err := toolkit.Canonical(view)
	if err != nil {
		return nil, nil, err
	}
	marker := []byte(seqKey + "0")
	i := bytes.Index(c, marker)
	if i < 0 || bytes.Count(c, []byte(seqKey)) != 1 {
		return nil, nil, fmt.Errorf("canonical content has %d chain_seq keys", bytes.Count(c, []byte(seqKey)))
	}
	return c[:i+len(seqKey)], c[i+len(marker):], nil
}

// appendFormat1 writes snap through the format-1 evidence_append (see
// restoreFormat1Append), as that build's store did, and returns the
// snapshot id (or the step's row).
func appendFormat1(ctx context.Context, t *testing.T, s *Store, snap toolkit.Snapshot) (id string, reused bool) {
	t.Helper()
	st, err := s.stage(snap)
	if err != nil {
		t.Fatal(err)
	}
	r := st.r
	head, tail, err := r.contentHashParts()
	if err != nil {
		t.Fatal(err)
	}
	var keyID *string
	if r.HasRaw {
		keyID = &r.RawKeyID
	}
	err = s.pool.QueryRow(ctx, `SELECT r_reused, r_snapshot_id FROM evidence_append($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,
		$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28)`, lockClass, r.SnapshotID,
		st.dedupeKey, r.ChainKey, r.Tool, r.ToolVersion, r.Build, r.WorkflowID, r.RunID, r.ActivityID,
		r.ActivityType, r.Attempt, r.RequestID, r.CorrelationID, r.UserIDHash, r.InputDigest, string(r.Output),
		r.OutputHash, r.rawCiphertext, r.rawNonce, keyID, r.RulesetVersion, r.TTLSeconds, r.Status, r.CreatedAt,
		r.TraceID, head, tail).Scan(&reused, &id)
	if err != nil {
		t.Fatalf("format-1 append: %v", err)
	}
	return id, reused
}
