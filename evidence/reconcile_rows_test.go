package evidence

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// A draft_orders row changed by a superuser no longer matches the create
// snapshot and is a violation; an untouched one, or a fresh row still
// waiting for its snapshot, is not.
func TestReconcileFindsChangedDraftRow(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	hash := "sha256:" + fmt.Sprintf("%064d", 7)
	insert := func(id string, age time.Duration) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
			quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce,
			ship_to_key_id, correlation_id, created_at, expires_at)
			VALUES ($1, 'uh_00000000000000000000000000000000', 'checkout.create_draft_order', $1, 'open', 'q1', $2, 'EUR', 7019,
			'{}', 'DE', '\x00', '\x00', 'k1', 'corr-0000000000000001', now() - make_interval(secs => $3), now() + interval '1 day')`,
			id, hash, age.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
	snap := func(n int, id string) {
		t.Helper()
		sn := snapshot(t, "wf-rows", n, map[string]any{"draft_order_id": id, "status": "open", "quote_hash": hash,
			"grand_total": map[string]any{"amount": 7019, "currency": "EUR"}})
		sn.Tool = createDraftTool
		if _, err := s.Record(ctx, sn); err != nil {
			t.Fatal(err)
		}
	}
	id := func(c string) string { return "do_" + strings.Repeat(c, 26) }
	ok, changed, fresh := id("A"), id("B"), id("C")
	insert(ok, time.Minute)
	snap(1, ok)
	insert(changed, time.Minute)
	snap(2, changed)
	insert(fresh, time.Second)
	rep, err := Reconcile(ctx, pool, ReconcileOptions{})
	if err != nil || rep.DraftRowsMismatched != 0 {
		t.Fatalf("before tampering: %+v %v", rep, err)
	}
	testenv.SuperExec(t, pool, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, changed)
	rep, err = Reconcile(ctx, pool, ReconcileOptions{})
	if err != nil || rep.DraftRowsMismatched != 1 || rep.ViolationCount() != 1 {
		t.Fatalf("after tampering: %+v %v", rep, err)
	}
	if v := rep.Violations[0]; v.Invariant != InvDraftRowMismatch || v.DraftOrderID != changed {
		t.Fatalf("violation = %+v", v)
	}
}
