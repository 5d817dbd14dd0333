package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestAttackPaymentOfAnotherTenant (docs/payments.md#webhooks): tenant
// acme's written draft order is charged; acme's agent reads its payment
// over MCP, tenant harbor's agent asking for the same draft order gets
// NOT_FOUND, the very answer an order that does not exist gets, so draft
// order ids cannot be probed; an agent with no tenant gets the same.
func TestAttackPaymentOfAnotherTenant(t *testing.T) {
	// Connected accounts from a fake that can be charges-enabled
	// (stripe-mock's never are); everything else from stripe-mock.
	accounts := stripefake.New()
	t.Cleanup(accounts.Close)
	accounts.SetAccount("acct_1CwAcmeGoods0001", stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	accountsURL, _ := url.Parse(accounts.URL)
	restURL, _ := url.Parse(testenv.StripeAPIBase())
	toAccounts, toRest := httputil.NewSingleHostReverseProxy(accountsURL), httputil.NewSingleHostReverseProxy(restURL)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/v1/accounts/") {
			toAccounts.ServeHTTP(w, req)
			return
		}
		toRest.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	st := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) {
		c.StripeAPIBase, c.HoldWindow, c.PaymentPollEvery = front.URL, time.Hour, time.Hour
	}})
	st.Env(t)
	s := gatewayOn(t, st)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()

	// Acme's order, charged to its merchant's connected account.
	key := newKey("acme-paid")
	in := draftorder.Input{
		Request: toolkit.Request{RequestID: "req-" + key, UserID: "tenant_acme", Tenant: "tenant_acme", IdempotencyKey: key,
			Currency: "EUR", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "tenant_acme"}},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}},
			ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
		MerchantID: "m_acme_goods",
	}
	h, err := s.client.StartDraftOrder(ctx, in)
	if err != nil || h.Status.Confirmation == nil {
		t.Fatalf("start: %+v, %v", h.Status, err)
	}
	done, err := s.client.ConfirmResult(ctx, h.WorkflowID, h.Status.Confirmation.QuoteHash)
	if err != nil || done.Result.DraftOrder == nil {
		t.Fatalf("confirm: %+v, %v", done, err)
	}
	draftID := done.Result.DraftOrder.DraftOrderID
	t.Cleanup(func() {
		_ = s.client.Temporal().TerminateWorkflow(context.Background(), h.WorkflowID, "", "test over")
	})
	for {
		if os, err := s.client.OrderStatus(ctx, h.WorkflowID); err == nil && os.Payment != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the order was never charged")
		case <-time.After(100 * time.Millisecond):
		}
	}

	acme := s.newToken(t, gateway.Actor{ID: "acme-payments", Tenant: "tenant_acme", CallsPerMinute: 1000})
	harbor := s.newToken(t, gateway.Actor{ID: "harbor-payments", Tenant: "tenant_harbor", CallsPerMinute: 1000})
	loner := s.newToken(t, gateway.Actor{ID: "lone-payments", CallsPerMinute: 1000})
	args := map[string]any{"draft_order_id": draftID}
	res, env := call(t, s.connect(t, acme.Token, nil), commerce.ToolGetPayment, args)
	var p commerce.Payment
	if res.IsError || !env.OK {
		t.Fatalf("acme reading its own payment: %+v", env.Error)
	}
	mustDecode(t, env, &p)
	// stripe-mock answers a canned intent; the draft and its stored
	// intent are what the tool read.
	var stored string
	if err := st.Pool.QueryRow(ctx, `SELECT payment_intent_id FROM payments WHERE draft_order_id = $1`, draftID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if p.DraftOrderID != draftID || p.PaymentIntentID == "" || stored == "" {
		t.Fatalf("acme's payment %+v (stored intent %q)", p, stored)
	}
	nowhere := "do_" + strings.Repeat("0", 26)
	for name, tok := range map[string]string{"harbor": harbor.Token, "no tenant": loner.Token} {
		sess := s.connect(t, tok, nil)
		res, env := call(t, sess, commerce.ToolGetPayment, args)
		_, none := call(t, sess, commerce.ToolGetPayment, map[string]any{"draft_order_id": nowhere})
		if !res.IsError || env.Error == nil || env.Error.Code != toolkit.NotFound || env.Data != nil {
			t.Fatalf("%s read acme's payment: isError %v %+v", name, res.IsError, env)
		}
		if none.Error == nil || none.Error.Code != env.Error.Code ||
			strings.ReplaceAll(none.Error.Message, nowhere, draftID) != env.Error.Message {
			t.Fatalf("%s can tell acme's order (%+v) from none (%+v)", name, env.Error, none.Error)
		}
		if strings.Contains(env.Error.Message, p.PaymentIntentID) {
			t.Fatalf("the refusal names acme's payment: %s", env.Error.Message)
		}
	}
}
