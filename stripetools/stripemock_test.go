package stripetools

import (
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The three tools against stripe-mock (the `make test` stack): the real
// stripe-go requests, validated by stripe-mock against Stripe's OpenAPI
// spec, and the envelopes our pipeline builds from its canned answers.
func TestStripeMockTools(t *testing.T) {
	testenv.Integration(t)
	r := newRig(t, testenv.StripeAPIBase())
	ctx := ctxT(t)

	t.Run("get_account_status", func(t *testing.T) {
		resp, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"})
		if err != nil {
			t.Fatalf("invoke: %v (is stripe-mock running at %s?)", err, testenv.StripeAPIBase())
		}
		var st AccountStatus
		if err := resp.Decode(&st); err != nil {
			t.Fatal(err)
		}
		if st.StripeAccountID != "acct_1CwAcmeGoods0001" || st.ObservedAt == "" {
			t.Fatalf("status = %+v", st)
		}
		// stripe-mock's fixture has requirements currently due.
		if len(st.Requirements.CurrentlyDue) == 0 || len(st.Due()) == 0 {
			t.Fatalf("expected the fixture's currently_due, got %+v", st.Requirements)
		}
		if resp.Status != toolkit.StatusOK || resp.Meta.Provider != "stripe" || resp.Meta.CacheHit {
			t.Fatalf("envelope = %+v", resp)
		}
		again, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"})
		if err != nil || !again.Meta.CacheHit {
			t.Fatalf("second read within the cache TTL: err=%v cache_hit=%v", err, again.Meta.CacheHit)
		}
	})

	t.Run("create_relink_url", func(t *testing.T) {
		resp, err := r.inv.Invoke(ctx, ToolRelinkURL, request("onb-relink-mock-1"), map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"})
		if err != nil {
			t.Fatal(err)
		}
		var l Link
		if err := resp.Decode(&l); err != nil {
			t.Fatal(err)
		}
		if l.AccountLinkType != "account_onboarding" || l.Secret != "***" || !strings.HasPrefix(l.URLSHA256, "sha256:") || l.ExpiresAt == "" {
			t.Fatalf("link = %+v", l)
		}
		if !resp.Meta.RedactionApplied {
			t.Fatal("the link must be masked by the sanitiser")
		}
		// stripe-mock dates every link 2009-02-13: a link made now never
		// shows that expiry; it is estimated from now and says so.
		exp, err := time.Parse(time.RFC3339, l.ExpiresAt)
		if err != nil || exp.Before(time.Now().Add(-time.Minute)) || !l.ExpiresAtEstimated {
			t.Fatalf("a fresh link's expiry %s (estimated %v)", l.ExpiresAt, l.ExpiresAtEstimated)
		}
		snaps := r.sink.all()
		raw := string(snaps[len(snaps)-1].RawOutput)
		if !strings.Contains(raw, "https://") {
			t.Fatalf("raw output kept for encryption must hold the link: %s", raw)
		}
	})

	t.Run("create_login_link", func(t *testing.T) {
		resp, err := r.inv.Invoke(ctx, ToolLoginLink, request("onb-login-mock-1"), map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"})
		if err != nil {
			t.Fatal(err)
		}
		var l Link
		if err := resp.Decode(&l); err != nil {
			t.Fatal(err)
		}
		if l.Secret != "***" || !l.ExpiresAtEstimated || l.URLSHA256 == "" {
			t.Fatalf("login link = %+v", l)
		}
	})
}
