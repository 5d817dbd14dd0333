package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v76/webhook"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestRefundAndReturnThroughTheCLI (docs/stock.md#returns): a merchant's
// order paid by a signed webhook is refunded one unit with `draft-order
// refund`; the same key with other lines is CONFLICT, a SKU the order
// lacks INVALID_ARGUMENT; `draft-order returned` with more units than the
// refund covered is refused, then puts the refunded unit back on hand,
// and again moves nothing; reconcile finds no unit returned twice.
func TestRefundAndReturnThroughTheCLI(t *testing.T) {
	const whsec = "whsec_cliRefundTestCliRefund12"
	accounts := stripefake.New()
	t.Cleanup(accounts.Close)
	accounts.SetAccount("acct_1CwJaneCrafts001", stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
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
	s := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) {
		c.StripeAPIBase, c.StripeWebhookSecret, c.HoldWindow, c.PaymentPollEvery = front.URL, whsec, time.Hour, time.Hour
	}})
	s.Env(t)
	t.Setenv("CARTWRIGHT_REFUND_RESTOCK", "on_return")
	hook := httptest.NewServer(s.Deps.Webhook.Handler())
	t.Cleanup(hook.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()

	file := filepath.Join(t.TempDir(), "order.json")
	order := `{"request": {"user_id": "u_cli", "currency": "EUR", "client": {"app": "cli"}}, "merchant_id": "m_jane_crafts",
 "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 2}],
 "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}}`
	if err := os.WriteFile(file, []byte(order), 0o600); err != nil {
		t.Fatal(err)
	}
	key := freshKey("cli-refund")
	id := "draft-order/u_cli/" + key
	var started startResult
	if r := jsonOut(t, &started, "draft-order", "start", "-f", file, "--key", key); r.code != 0 || started.Status == nil || started.Status.Confirmation == nil {
		t.Fatalf("start: exit %d %+v: %s", r.code, started, r.stderr)
	}
	if r := runCLI(t, "", "draft-order", "confirm", id, "--quote-hash", started.Status.Confirmation.QuoteHash); r.code != 0 {
		t.Fatalf("confirm: exit %d: %s", r.code, r.stderr)
	}
	var os1 draftorder.SettleStatus
	for os1.Payment == nil {
		if r := jsonOut(t, &os1, "draft-order", "order-status", id); r.code != 0 {
			t.Fatalf("order-status: exit %d: %s", r.code, r.stderr)
		}
		select {
		case <-ctx.Done():
			t.Fatal("never charged")
		case <-time.After(100 * time.Millisecond):
		}
	}
	p := os1.Payment
	body, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("evt_cliPaid%d", time.Now().UnixNano()), "object": "event", "type": draftorder.EventPaymentSucceeded,
		"api_version": "2023-10-16", "created": time.Now().Unix(), "livemode": false,
		"data": map[string]any{"object": map[string]any{"id": p.PaymentIntentID, "object": "payment_intent",
			"amount": p.Amount.Amount, "currency": strings.ToLower(p.Amount.Currency), "status": "succeeded"}},
	})
	sig := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: whsec, Timestamp: time.Now()})
	req, _ := http.NewRequest(http.MethodPost, hook.URL+webhook.Path, bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", sig.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %v %v", resp, err)
	}
	resp.Body.Close()
	for os1.Result == nil {
		if r := jsonOut(t, &os1, "draft-order", "order-status", id); r.code != 0 {
			t.Fatalf("order-status: exit %d: %s", r.code, r.stderr)
		}
		select {
		case <-ctx.Done():
			t.Fatal("never paid")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if os1.Result.State != draftorder.StatePaid {
		t.Fatalf("settled %+v", os1.Result)
	}
	onHand := func() int {
		var n int
		if err := s.Pool.QueryRow(ctx, `SELECT on_hand FROM catalog_stock WHERE sku = 'TEE-ORG-M-WHT'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	paidOnHand := onHand()

	rk := freshKey("rf")
	var st draftorder.RefundStatus
	if r := jsonOut(t, &st, "draft-order", "refund", id, "--key", rk, "--line", "TEE-ORG-M-WHT=1"); r.code != 0 ||
		st.Result == nil || st.Result.State != draftorder.StateRefunded || st.Return == nil || st.Return.State != draftorder.ReturnAwaiting {
		t.Fatalf("refund: exit %d %+v: %s", r.code, st, r.stderr)
	}
	runCLI(t, "", "draft-order", "refund", id, "--key", rk, "--line", "TEE-ORG-M-WHT=2").
		oneLineErr(t, "the same key, other lines", exitRefused, "CONFLICT", rk)
	runCLI(t, "", "draft-order", "refund", id, "--key", freshKey("rf-bad"), "--line", "TOY-PUZ-1000-ALP=1").
		oneLineErr(t, "a SKU the order lacks", exitCannot, "INVALID_ARGUMENT", "TOY-PUZ-1000-ALP")
	runCLI(t, "", "draft-order", "returned", id, "--key", rk, "--line", "TEE-ORG-M-WHT=2").
		oneLineErr(t, "more than refunded", exitCannot, "INVALID_ARGUMENT", "this refund covered 1")
	if got := onHand(); got != paidOnHand {
		t.Fatalf("a refused return moved stock: on_hand %d, want %d", got, paidOnHand)
	}
	for i := 0; i < 2; i++ {
		if r := jsonOut(t, &st, "draft-order", "returned", id, "--key", rk); r.code != 0 || st.Return == nil ||
			st.Return.State != draftorder.ReturnRestocked || len(st.Return.Lines) != 1 || st.Return.Lines[0].Quantity != 1 {
			t.Fatalf("returned (%d): exit %d %+v: %s", i, r.code, st.Return, r.stderr)
		}
		if got := onHand(); got != paidOnHand+1 {
			t.Fatalf("after return %d: on_hand %d, want %d", i, got, paidOnHand+1)
		}
	}
	// The refund run, its return included, audits clean.
	var arep audit.Report
	if r := jsonOut(t, &arep, "audit", "draft-order-refund/u_cli/"+key+"/"+rk); r.code != 0 || !arep.Clean || len(arep.Activities) < 3 {
		t.Fatalf("audit of the refund: exit %d %+v: %s", r.code, arep, r.stderr)
	}
	var rep evidence.ReconcileReport
	if r := jsonOut(t, &rep, "reconcile"); r.code > exitRefused || rep.StockReturnedTwice != 0 || rep.StockTakenTwice != 0 {
		t.Fatalf("reconcile: exit %d %+v: %s", r.code, rep, r.stderr)
	}
}
