package draftordertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
	sdkclient "go.temporal.io/sdk/client"

	cwclient "github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// settleRig is a stack whose hold window and Stripe are the test's, with
// the webhook receiver served over HTTP.
type settleRig struct {
	*stack
	ts     *wiringtest.Stack
	hook   *httptest.Server
	secret string
	// accounts serves the connected accounts (stripe-mock's are never
	// charges-enabled); stripe is the switch in front of stripe-mock that
	// serves everything else and can take Stripe down.
	accounts *stripefake.Server
	stripe   *testenv.StripeSwitch
}

func newSettleRig(t *testing.T, hold time.Duration, configure ...func(*config.Config)) *settleRig {
	t.Helper()
	r := &settleRig{secret: "whsec_settleTestSettleTest1234", accounts: stripefake.New(), stripe: testenv.NewStripeSwitch(t)}
	t.Cleanup(r.accounts.Close)
	r.accounts.SetAccount("acct_1CwJaneCrafts001", stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	r.accounts.SetAccount("acct_1CwBlueHarbor001", stripefake.Account{CurrentlyDue: []string{"individual.id_number"}, DisabledReason: "requirements.past_due"})
	accountsURL, _ := url.Parse(r.accounts.URL)
	restURL, _ := url.Parse(r.stripe.URL)
	toAccounts, toRest := httputil.NewSingleHostReverseProxy(accountsURL), httputil.NewSingleHostReverseProxy(restURL)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/v1/accounts/") {
			toAccounts.ServeHTTP(w, req)
			return
		}
		toRest.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	r.ts = wiringtest.StartWith(t, wiringtest.Options{MaxConns: 16, Configure: func(c *config.Config) {
		c.HoldWindow, c.StripeWebhookSecret, c.PaymentPollEvery = hold, r.secret, time.Hour
		c.StripeAPIBase = front.URL
		for _, f := range configure {
			f(c)
		}
	}})
	r.stack = &stack{t: t, pool: r.ts.Pool, store: r.ts.Store, tc: r.ts.Temporal, queue: r.ts.TaskQueue, specs: r.ts.Deps.Registry.Specs()}
	r.hook = httptest.NewServer(r.ts.Deps.Webhook.Handler())
	t.Cleanup(r.hook.Close)
	return r
}

// written drives a draft order of in to DRAFT_CREATED and returns its
// draft and the id of its run, which goes on holding the draft.
func (r *settleRig) written(ctx context.Context, in draftorder.Input) (commerce.DraftOrder, string) {
	r.t.Helper()
	run := r.start(ctx, in)
	st := r.awaitState(ctx, run.GetID(), draftorder.StateNeedsConfirm)
	if err := r.tc.SignalWorkflow(ctx, run.GetID(), "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: st.Confirmation.QuoteHash}); err != nil {
		r.t.Fatal(err)
	}
	res, err := drafttest.Result(ctx, r.tc, run.GetID())
	if err != nil || res.State != draftorder.StateDraftCreated {
		r.t.Fatalf("draft order: %+v, %v", res, err)
	}
	id := run.GetID()
	r.t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.tc.TerminateWorkflow(c, id, "", "test over")
	})
	return *res.DraftOrder, id
}

// settleStatus is the hold of the written draft order id (its status
// query's order).
func (r *settleRig) settleStatus(ctx context.Context, id string) draftorder.SettleStatus {
	r.t.Helper()
	v, err := r.tc.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		r.t.Fatal(err)
	}
	var st draftorder.Status
	if err := v.Get(&st); err != nil {
		r.t.Fatal(err)
	}
	if st.Order == nil {
		r.t.Fatalf("%s holds no written draft (state %s)", id, st.State)
	}
	return *st.Order
}

// settled waits for the end of the hold of draft order id: the run's end.
func (r *settleRig) settled(ctx context.Context, id string) draftorder.SettleResult {
	r.t.Helper()
	var res draftorder.Result
	if err := r.tc.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		r.t.Fatalf("settle %s: %v", id, err)
	}
	if res.Settled == nil {
		r.t.Fatalf("%s ended %s without a hold", id, res.State)
	}
	return *res.Settled
}

// stock is (on_hand, reserved) of sku in warehouse.
func (r *settleRig) stockOf(ctx context.Context, sku, warehouse string) (int, int) {
	r.t.Helper()
	q := `SELECT on_hand, reserved FROM catalog_warehouse_stock WHERE sku = $1 AND warehouse = $2`
	args := []any{sku, warehouse}
	if warehouse == "DE" {
		q, args = `SELECT on_hand, reserved FROM catalog_stock WHERE sku = $1`, []any{sku}
	}
	var on, res int
	if err := r.pool.QueryRow(ctx, q, args...).Scan(&on, &res); err != nil {
		r.t.Fatal(err)
	}
	return on, res
}

// movements counts the ledger's movements of a draft by kind.
func (r *settleRig) movements(ctx context.Context, draftID string) map[string]int {
	r.t.Helper()
	rows, err := r.pool.Query(ctx, `SELECT kind, sum(quantity)::int FROM stock_movements WHERE draft_order_id = $1 GROUP BY kind`, draftID)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			r.t.Fatal(err)
		}
		out[k] = n
	}
	return out
}

// post sends a Stripe event signed with Stripe's own library.
func (r *settleRig) post(typ, eventID string, p *draftorder.PaymentView) (int, map[string]any) {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"id": eventID, "object": "event", "type": typ, "api_version": "2023-10-16", "created": time.Now().Unix(), "livemode": false,
		"data": map[string]any{"object": map[string]any{"id": p.PaymentIntentID, "object": "payment_intent",
			"amount": p.Amount.Amount, "currency": lower(p.Amount.Currency), "status": "succeeded"}},
	})
	sig := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: r.secret, Timestamp: time.Now()})
	req, _ := http.NewRequest(http.MethodPost, r.hook.URL+webhook.Path, bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", sig.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var a map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

// awaitPayment waits until the order's run made its charge.
func (r *settleRig) awaitPayment(ctx context.Context, id string) *draftorder.PaymentView {
	r.t.Helper()
	for {
		if st := r.settleStatus(ctx, id); st.Payment != nil {
			return st.Payment
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("%s never charged", id)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A cancelled draft gives its units back at once, once: reserved goes up
// at the write and back down at the cancel, the ledger holds one reserve
// and one release, the draft row says cancelled, and a second cancel is
// answered from the result without moving anything.
func TestCancelAfterWriteReleasesStockOnce(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 1}
	on0, res0 := r.stockOf(ctx, item.SKU, "DE")
	in := input(uniqueKey("settle-cancel"), item)
	draftID, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	draft, _ := r.written(ctx, in)
	if on, res := r.stockOf(ctx, item.SKU, "DE"); on != on0 || res != res0+1 {
		t.Fatalf("after the write: on_hand %d reserved %d, want %d %d", on, res, on0, res0+1)
	}
	so := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	codec.Apply(&so, codectest.Codec())
	c, err := cwclient.New(ctx, cwclient.Options{Temporal: so, TaskQueue: r.queue})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 2; i++ {
		st, err := c.CancelOrder(ctx, draftID, "test")
		if err != nil || st.Result == nil || st.Result.State != draftorder.StateCancelled {
			t.Fatalf("cancel %d answered %+v, %v", i, st, err)
		}
	}
	if on, res := r.stockOf(ctx, item.SKU, "DE"); on != on0 || res != res0 {
		t.Fatalf("after the cancel: on_hand %d reserved %d, want %d %d", on, res, on0, res0)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["reserve"] != 1 || m["release"] != 1 || m["commit"] != 0 {
		t.Fatalf("ledger %v", m)
	}
	var status string
	if err := r.pool.QueryRow(ctx, `SELECT status FROM draft_orders WHERE draft_order_id = $1`, draft.DraftOrderID).Scan(&status); err != nil || status != "cancelled" {
		t.Fatalf("draft row status %q, %v", status, err)
	}
}

// A hold nobody ends gives its units back when the hold window ends.
func TestHoldWindowEndsReleases(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, 3*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 2}
	_, res0 := r.stockOf(ctx, item.SKU, "DE")
	draft, id := r.written(ctx, input(uniqueKey("settle-hold"), item))
	res := r.settled(ctx, id)
	if res.State != draftorder.StateExpired || res.Stock == nil || res.Stock.Reason != commerce.ReasonHoldExpired {
		t.Fatalf("settle result %+v", res)
	}
	if _, got := r.stockOf(ctx, item.SKU, "DE"); got != res0 {
		t.Fatalf("reserved %d after the hold, want %d", got, res0)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["reserve"] != 2 || m["release"] != 2 {
		t.Fatalf("ledger %v", m)
	}
}

// A paid order: one PaymentIntent for the confirmed total to the
// merchant's connected account, the outcome by a signed webhook replayed
// 100 times (concurrently): one signal, the stock committed once
// (on_hand and reserved down together), a cancel after payment refused.
func TestPaidByWebhookCommitsOnce(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 1}
	on0, res0 := r.stockOf(ctx, item.SKU, "DE")
	in := input(uniqueKey("settle-paid"), item)
	in.MerchantID = "m_jane_crafts"
	draft, id := r.written(ctx, in)
	p := r.awaitPayment(ctx, id)
	if p.Amount != draft.GrandTotal || p.SecretSHA256 == "" || p.SecretSnapshot == "" {
		t.Fatalf("payment %+v for draft total %+v", p, draft.GrandTotal)
	}
	var stored struct {
		amount, fee int64
		dest        string
	}
	if err := r.pool.QueryRow(ctx, `SELECT amount_minor, fee_minor, destination_account FROM payments WHERE draft_order_id = $1`, draft.DraftOrderID).
		Scan(&stored.amount, &stored.fee, &stored.dest); err != nil {
		t.Fatal(err)
	}
	if stored.amount != draft.GrandTotal.Amount || stored.fee != draft.GrandTotal.Amount*300/10000 || stored.dest != "acct_1CwJaneCrafts001" {
		t.Fatalf("stored payment %+v", stored)
	}
	// A forged event: another intent, or another amount, is refused by
	// the run (the receiver finds no payment, or the run the mismatch).
	forged := *p
	forged.Amount.Amount++
	if code, a := r.post(draftorder.EventPaymentSucceeded, "evt_forgedAmount"+fmt.Sprint(time.Now().UnixNano()), &forged); code != http.StatusOK {
		t.Fatalf("forged amount: %d %v", code, a)
	}
	other := *p
	other.PaymentIntentID = "pi_notOursAtAll123"
	if code, a := r.post(draftorder.EventPaymentSucceeded, "evt_otherIntent"+fmt.Sprint(time.Now().UnixNano()), &other); code != http.StatusOK || a["status"] != webhook.StatusIgnoredPayment {
		t.Fatalf("other intent: %d %v", code, a)
	}
	if st := r.settleStatus(ctx, id); st.Result != nil || st.State != draftorder.StateAwaitingPayment {
		t.Fatalf("a forged event moved the order: %+v", st)
	}
	eventID := fmt.Sprintf("evt_paid%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[any]int{}
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, a := r.post(draftorder.EventPaymentSucceeded, eventID, p)
			mu.Lock()
			defer mu.Unlock()
			outcomes[fmt.Sprint(code, " ", a["status"])]++
		}()
	}
	wg.Wait()
	if outcomes["200 signalled"] != 1 || outcomes["200 duplicate"] != 99 {
		t.Fatalf("100 deliveries: %v", outcomes)
	}
	res := r.settled(ctx, id)
	if res.State != draftorder.StatePaid || res.Stock == nil || res.Stock.State != "committed" || len(res.Payment.Events) != 1 {
		t.Fatalf("settle result %+v", res)
	}
	if on, got := r.stockOf(ctx, item.SKU, "DE"); on != on0-1 || got != res0 {
		t.Fatalf("after payment: on_hand %d reserved %d, want %d %d", on, got, on0-1, res0)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["reserve"] != 1 || m["commit"] != 1 || m["release"] != 0 {
		t.Fatalf("ledger %v", m)
	}
	if _, err := r.tc.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{WorkflowID: id, UpdateName: draftorder.UpdateCancelOrder,
		Args: []any{draftorder.CancelOrderInput{}}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted}); err == nil {
		t.Fatal("a cancel after payment was accepted")
	}
}

// A failed payment cancels the charge and gives the units back.
func TestPaymentFailedReleases(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 1}
	_, res0 := r.stockOf(ctx, item.SKU, "DE")
	in := input(uniqueKey("settle-failed"), item)
	in.MerchantID = "m_jane_crafts"
	draft, id := r.written(ctx, in)
	p := r.awaitPayment(ctx, id)
	if code, a := r.post(draftorder.EventPaymentFailed, fmt.Sprintf("evt_failed%d", time.Now().UnixNano()), p); code != http.StatusOK {
		t.Fatalf("failed event: %d %v", code, a)
	}
	res := r.settled(ctx, id)
	if res.State != draftorder.StatePaymentFailed || res.Stock == nil || res.Stock.Reason != commerce.ReasonPaymentFailed {
		t.Fatalf("settle result %+v", res)
	}
	if _, got := r.stockOf(ctx, item.SKU, "DE"); got != res0 {
		t.Fatalf("reserved %d, want %d", got, res0)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["release"] != 1 {
		t.Fatalf("ledger %v", m)
	}
}

// Onboarding gates selling: a merchant whose account cannot take charges
// is refused before anything is quoted (no pricing call, no stock taken),
// with its onboarding as the recovery; an unknown merchant is refused too.
func TestMerchantNotReadyRefusedBeforeQuote(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	for _, m := range []string{"m_blue_harbor", "m_cedar_studio"} {
		in := input(uniqueKey("gate"), commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 1})
		in.MerchantID = m
		res, err := drafttest.Result(ctx, r.tc, r.start(ctx, in).GetID())
		if err != nil {
			t.Fatal(err)
		}
		if res.State != draftorder.StateMerchantNotReady || res.Code != "FORBIDDEN" || res.Error == nil ||
			res.Error.Details["onboarding_workflow_id"] != "onboarding/"+m || len(res.Error.NextSteps) == 0 || res.Total != nil {
			t.Fatalf("%s: %+v (error %+v)", m, res, res.Error)
		}
		var n int
		id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
		if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = $1 AND tool = $2`, id, commerce.ToolGetQuote).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: %d pricing snapshots, %v", m, n, err)
		}
	}
}

// paid drives an order of the merchant to PAID by a signed webhook.
func (r *settleRig) paid(ctx context.Context, key string, items ...commerce.LineItem) (string, commerce.DraftOrder) {
	r.t.Helper()
	in := input(uniqueKey(key), items...)
	in.MerchantID = "m_jane_crafts"
	draftID, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	draft, id := r.written(ctx, in)
	p := r.awaitPayment(ctx, id)
	if code, a := r.post(draftorder.EventPaymentSucceeded, fmt.Sprintf("evt_paid%d", time.Now().UnixNano()), p); code != http.StatusOK {
		r.t.Fatalf("paid event: %d %v", code, a)
	}
	if res := r.settled(ctx, id); res.State != draftorder.StatePaid {
		r.t.Fatalf("settle %+v", res)
	}
	return draftID, draft
}
