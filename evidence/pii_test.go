package evidence

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestRawPIIOnlyEncrypted plants an e-mail address and a card number in a
// tool's raw output (and as the user id), runs the call through the real
// invoker and the store, then scans every text, json and bytea column of
// every table for them: they may exist only inside the ciphertext, which
// ReadRaw opens.
func TestRawPIIOnlyEncrypted(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	core, logs := observer.New(zap.DebugLevel)
	s.log = zap.New(core)
	const email, card, cardSpaced = "jane.doe@example.com", "4242424242424242", "4242 4242 4242 4242"

	inv := testInvoker(t, s, fixedAnswer(map[string]any{
		"customer_email": email, "card_on_file": cardSpaced, "card_raw": card, "total_minor": 1250,
	}))
	req := testRequest("req-pii-1")
	req.UserID = email
	resp, err := inv.Invoke(ctx, testTool, req, map[string]any{"n": 1, "email": email})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SnapshotID()
	if id == "" || !resp.Meta.RedactionApplied {
		t.Fatalf("snapshot %q, redaction applied %v", id, resp.Meta.RedactionApplied)
	}
	// The audit trail of the same user, hashed.
	if err := s.WriteReject(ctx, AuditEntry{CorrelationID: "corr-00000000000000aa", Tool: testTool, UserID: email,
		ActorType: toolkit.ActorUser, Reason: "compliance_blocked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadRaw(ctx, id, "carol.admin", "pii test: prove the raw copy survives"); err != nil {
		t.Fatal(err)
	}

	rows, err := pool.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY')
		ORDER BY table_name, column_name`)
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ table, column, typ string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.column, &c.typ); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if rows.Err() != nil || len(cols) < 20 {
		t.Fatalf("found %d columns to scan (%v)", len(cols), rows.Err())
	}
	scanned := 0
	for _, c := range cols {
		for _, needle := range []string{email, card, cardSpaced} {
			cond := fmt.Sprintf(`strpos(%q::text, $1) > 0`, c.column)
			if c.typ == "bytea" {
				cond = fmt.Sprintf(`position(convert_to($1, 'UTF8') in %q) > 0`, c.column)
			}
			var n int
			if err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %q WHERE %s`, c.table, cond), needle).Scan(&n); err != nil {
				t.Fatalf("scan %s.%s: %v", c.table, c.column, err)
			}
			if n > 0 {
				t.Errorf("%q found in clear in %s.%s (%d rows)", needle, c.table, c.column, n)
			}
			scanned++
		}
	}
	t.Logf("scanned %d column/needle pairs over %d columns", scanned, len(cols))

	var hasCipher bool
	if err := pool.QueryRow(ctx, `SELECT raw_ciphertext IS NOT NULL FROM evidence_snapshots WHERE snapshot_id = $1`, id).Scan(&hasCipher); err != nil || !hasCipher {
		t.Fatalf("raw output was not stored encrypted (%v)", err)
	}
	raw, err := s.ReadRaw(ctx, id, "carol.admin", "pii test")
	if err != nil || !strings.Contains(string(raw), email) || !strings.Contains(string(raw), card) {
		t.Fatalf("ReadRaw did not return the raw output: %s %v", raw, err)
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(line, email) || strings.Contains(line, card) {
			t.Errorf("PII in a log line: %s", line)
		}
	}
}
