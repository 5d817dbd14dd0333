package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/api/serviceerror"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// Tests of docs/mcp.md#direct-reads: read-only calls answered by the
// gateway without a workflow keep the ToolCall contract.

func quoteArgs(key string, qty int) map[string]any {
	args := map[string]any{"currency": "EUR", "items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": qty}}}
	if key != "" {
		args["idempotency_key"] = key
	}
	return args
}

// TestDirectReadSameKey: a keyed read is answered without a workflow, its
// snapshot in its key's chain; the same call again is the same envelope
// (the same snapshot, nothing new written); the key with other arguments
// is CONFLICT naming the first request's digest; the audit of the direct
// calls is CLEAN.
func TestDirectReadSameKey(t *testing.T) {
	s := newStack(t)
	since := time.Now().Add(-time.Second)
	sess := s.connect(t, s.token, nil)
	ctx := context.Background()
	key := newKey("direct-same")
	res, first := call(t, sess, commerce.ToolGetQuote, quoteArgs(key, 1))
	if res.IsError || !first.OK || first.SnapshotID() == "" {
		t.Fatalf("first call: %+v", first.Error)
	}
	var nf *serviceerror.NotFound
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, toolcall.IDPrefix+s.actor.UserID()+"/"+key, ""); !errors.As(err, &nf) {
		t.Fatalf("a read ran as a workflow (%v)", err)
	}
	rec, err := s.Store.Get(ctx, first.SnapshotID())
	if err != nil {
		t.Fatal(err)
	}
	chain := evidence.DirectChainKey(evidence.HashUserID(s.actor.UserID()), key)
	if rec.ChainKey != chain || rec.ActivityType != evidence.DirectActivityType || rec.RequestID != key {
		t.Fatalf("snapshot in chain %s (%s, request %s), want %s", rec.ChainKey, rec.ActivityType, rec.RequestID, chain)
	}
	// Another session, the same request: the same answer.
	_, again := call(t, s.connect(t, s.token, nil), commerce.ToolGetQuote, quoteArgs(key, 1))
	if !again.OK || again.SnapshotID() != first.SnapshotID() || string(again.Data) != string(first.Data) {
		t.Fatalf("the same request again: %s %s", again.SnapshotID(), again.Data)
	}
	res, other := call(t, sess, commerce.ToolGetQuote, quoteArgs(key, 2))
	digest, _ := toolcall.Fingerprint(toolkit.ToolCall{Tool: commerce.ToolGetQuote,
		Input: mustJSON(t, quoteArgs("", 1)), Request: toolkit.Request{UserID: s.actor.UserID()}})
	if !res.IsError {
		t.Fatalf("other arguments under the key answered %+v", other)
	}
	requireKeyConflict(t, "direct read, other quantity", other.Error, commerce.ToolGetQuote, key, digest)
	var rows int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE chain_key = $1`, chain).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d snapshots in the key's chain (%v), want 1", rows, err)
	}
	rep, err := s.Store.AuditDirect(ctx, since)
	if err != nil || !rep.Clean || rep.Calls < 1 {
		t.Fatalf("direct audit: %v %+v", err, rep)
	}
}

// TestDirectReadConcurrentSameKey: calls racing with one key and the same
// arguments all get one answer; one snapshot and one binding are written.
func TestDirectReadConcurrentSameKey(t *testing.T) {
	s := newStack(t)
	key := newKey("direct-race")
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, env := call(t, s.connect(t, s.token, nil), commerce.ToolGetQuote, quoteArgs(key, 3))
			if env.OK {
				ids[i] = env.SnapshotID()
			}
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("racing calls answered %v", ids)
		}
	}
	chain := evidence.DirectChainKey(evidence.HashUserID(s.actor.UserID()), key)
	var snaps, bindings int
	if err := s.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM evidence_snapshots WHERE chain_key = $1),
		(SELECT count(*) FROM evidence_direct_calls WHERE chain_key = $1)`, chain).Scan(&snaps, &bindings); err != nil {
		t.Fatal(err)
	}
	// A racer that lost wrote nothing: it answered the winner's.
	if snaps != 1 || bindings != 1 {
		t.Fatalf("%d snapshots and %d bindings for one key", snaps, bindings)
	}
}

// TestAttackDirectKeyOfAnotherTenant: another tenant's agent using the
// same key with the same arguments gets its own answer (FORBIDDEN for a
// merchant not its own), never the answer kept under the first tenant's
// key.
func TestAttackDirectKeyOfAnotherTenant(t *testing.T) {
	s := newStack(t)
	acme := s.newToken(t, gateway.Actor{ID: "acme-direct", Tenant: "tenant_acme", CallsPerMinute: 1000})
	harbor := s.newToken(t, gateway.Actor{ID: "harbor-direct", Tenant: "tenant_harbor", CallsPerMinute: 1000})
	key := newKey("direct-tenant")
	args := map[string]any{"merchant_id": "m_acme_goods", "idempotency_key": key}
	if res, env := call(t, s.connect(t, acme.Token, nil), "merchant.get_row", args); res.IsError || !env.OK {
		t.Fatalf("acme reads its merchant: %+v", env.Error)
	}
	res, env := call(t, s.connect(t, harbor.Token, nil), "merchant.get_row", args)
	if !res.IsError || env.Error == nil || env.Error.Code != toolkit.Forbidden || len(env.Data) != 0 {
		t.Fatalf("harbor with acme's key: isError %v %+v data %s", res.IsError, env.Error, env.Data)
	}
}

// TestAttackDirectEvidenceIsAppendOnly: the runtime role cannot write a
// binding of its own (only evidence_append_direct_row writes them, linked
// into the key's chain), cannot edit or delete one, and the function
// refuses a chain that is not a direct call's.
func TestAttackDirectEvidenceIsAppendOnly(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	_, env := call(t, s.connect(t, s.token, nil), commerce.ToolGetQuote, quoteArgs(newKey("direct-priv"), 1))
	if !env.OK {
		t.Fatalf("read: %+v", env.Error)
	}
	forged := `INSERT INTO evidence_direct_calls (chain_key, tool, fingerprint, snapshot_id, envelope)
		VALUES ('direct:' || repeat('0', 64), 'pricing.get_realtime_quote', 'sha256:' || repeat('0', 64), $1, '{}')`
	for what, q := range map[string]string{
		"insert a binding": forged,
		"edit a binding":   `UPDATE evidence_direct_calls SET envelope = '{}' WHERE snapshot_id = $1`,
		"delete a binding": `DELETE FROM evidence_direct_calls WHERE snapshot_id = $1`,
	} {
		_, err := s.Pool.Exec(ctx, q, env.SnapshotID())
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "42501" {
			t.Fatalf("%s as the runtime role: %v, want insufficient_privilege", what, err)
		}
	}
	for what, row := range map[string]string{
		"a workflow's chain":                 `{"chain_key": "tool-call/x", "activity_type": "CallTool", "workflow_id": "wf"}`,
		"a workflow's row in a direct chain": `{"chain_key": "direct:` + strings.Repeat("0", 64) + `", "activity_type": "direct", "workflow_id": "wf"}`,
		"no workflow field":                  `{"chain_key": "direct:` + strings.Repeat("0", 64) + `", "activity_type": "direct"}`,
	} {
		_, err := s.Pool.Exec(ctx, `SELECT evidence_append_direct_row(1, $1::jsonb, 'sha256:'||repeat('0',64), '{}', true)`, row)
		if err == nil || !strings.Contains(err.Error(), "not a direct call's chain") {
			t.Fatalf("evidence_append_direct_row with %s: %v, want refused", what, err)
		}
	}
	// Tampering as the owner is what the audit finds.
	since := time.Now().Add(-time.Minute)
	testenv.SuperExec(t, s.Pool, `UPDATE evidence_direct_calls SET envelope = jsonb_set(envelope, '{data,currency}', '"USD"') WHERE snapshot_id = $1`, env.SnapshotID())
	rep, err := s.Store.AuditDirect(ctx, since)
	if err != nil || rep.Clean || rep.Findings[0].Kind != evidence.DirectEnvelopeMismatch || rep.Findings[0].SnapshotID != env.SnapshotID() {
		t.Fatalf("audit after an edited envelope: %v %+v", err, rep)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
