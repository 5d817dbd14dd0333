package merchant

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func invoker(t *testing.T) (*toolkit.Invoker, *Store) {
	t.Helper()
	pool := testenv.Postgres(t)
	store := NewStore(pool)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, Deps{Store: store}); err != nil {
		t.Fatal(err)
	}
	return toolkit.NewInvoker(reg, toolkit.DiscardEvidence{}, nil), store
}

func req() toolkit.Request {
	return toolkit.Request{RequestID: "req-m-1", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "wizard"}, UserID: "u_1"}
}

func TestGetRow(t *testing.T) {
	inv, _ := invoker(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()

	cases := []struct {
		name    string
		in      map[string]any
		found   bool
		merch   string
		account string
	}{
		{"by merchant id", map[string]any{"merchant_id": "m_acme_goods"}, true, "m_acme_goods", "acct_1CwAcmeGoods0001"},
		{"by session", map[string]any{"user_session_id": "sess_demo_blue_0001"}, true, "m_blue_harbor", "acct_1CwBlueHarbor001"},
		{"merchant id wins", map[string]any{"merchant_id": "m_jane_crafts", "user_session_id": "sess_demo_blue_0001"}, true, "m_jane_crafts", "acct_1CwJaneCrafts001"},
		{"no stripe account yet", map[string]any{"merchant_id": "m_cedar_studio"}, true, "m_cedar_studio", ""},
		{"unknown merchant", map[string]any{"merchant_id": "m_nobody_here"}, false, "", ""},
		{"expired session", map[string]any{"user_session_id": "sess_demo_expired_01"}, false, "", ""},
		{"unknown session", map[string]any{"user_session_id": "sess_never_issued"}, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := inv.Invoke(ctx, ToolGetRow, req(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			var out GetRowOutput
			if err := resp.Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.Found != c.found || out.MerchantID != c.merch || out.StripeAccountID != c.account {
				t.Fatalf("got %+v", out)
			}
			wantStatus := toolkit.StatusOK
			if !c.found {
				wantStatus = toolkit.StatusEmpty
			}
			if resp.Status != wantStatus || out.ObservedAt == "" {
				t.Fatalf("status %s, observed_at %q", resp.Status, out.ObservedAt)
			}
			if c.found && (out.StatusSummary == nil || out.StatusSummary.HasStripeAccount != (c.account != "") || out.Version < 1) {
				t.Fatalf("summary %+v version %d", out.StatusSummary, out.Version)
			}
			// No PII column ever leaves the tool.
			b, _ := json.Marshal(resp)
			for _, pii := range []string{"Acme Goods", "Blue Harbor", "Jane Doe", "example", "+1 ", "+44", "sess_"} {
				if strings.Contains(string(b), pii) {
					t.Fatalf("envelope holds %q: %s", pii, b)
				}
			}
		})
	}
}

func TestGetRowRefusesBadInput(t *testing.T) {
	inv, _ := invoker(t)
	ctx := context.Background()
	for _, in := range []map[string]any{
		{}, {"merchant_id": "acme"}, {"user_session_id": "short"}, {"merchant_id": "m_acme_goods", "email": "x@y.z"},
	} {
		_, err := inv.Invoke(ctx, ToolGetRow, req(), in)
		if toolkit.CodeOf(err) != toolkit.InvalidArgument {
			t.Fatalf("%v: err = %v, want INVALID_ARGUMENT", in, err)
		}
	}
}

// TestGetRowTimesOut holds a lock on the table so the query waits; the
// statement timeout ends it and the tool answers TIMEOUT within its limit.
// The lock is the superuser's: the runtime role only reads merchants, and
// an exclusive lock needs a write right.
func TestGetRowTimesOut(t *testing.T) {
	inv, store := invoker(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testenv.AdminDSNFor(store.pool.Config().ConnString()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE merchants IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = inv.Invoke(ctx, ToolGetRow, req(), map[string]any{"merchant_id": "m_acme_goods"})
	te := toolkit.AsError(err)
	if te == nil || te.Code != toolkit.Timeout || te.Details["upstream_code"] != "timeout" || !te.CanRetry {
		t.Fatalf("err = %+v, want a retryable TIMEOUT", te)
	}
	if el := time.Since(start); el > GetRowSpec().Timeout+500*time.Millisecond {
		t.Fatalf("took %s, beyond the tool's %s", el, GetRowSpec().Timeout)
	}
}

func TestByStripeAccount(t *testing.T) {
	_, store := invoker(t)
	row, found, err := store.ByStripeAccount(context.Background(), AllTenants, "acct_1CwBlueHarbor001")
	if err != nil || !found || row.MerchantID != "m_blue_harbor" {
		t.Fatalf("row %+v found %v err %v", row, found, err)
	}
	if _, found, _ := store.ByStripeAccount(context.Background(), AllTenants, "acct_1CwNobody00001"); found {
		t.Fatal("unknown account found")
	}
}
