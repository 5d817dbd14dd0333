package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

const (
	secretNew = "whsec_newNewNewNewNewNewNewNew1234"
	secretOld = "whsec_oldOldOldOldOldOldOldOld5678"
	acmeAcct  = "acct_1CwAcmeGoods0001"
)

// fakeSignaler records SignalWithStart calls; delay makes a call slow, so
// concurrent duplicates overlap; err makes it fail.
type fakeSignaler struct {
	mu    sync.Mutex
	calls []signalCall
	delay time.Duration
	err   error
}

type signalCall struct {
	ID, Signal string
	Arg        any
	Opts       client.StartWorkflowOptions
	Input      onboardingflow.Input
}

func (f *fakeSignaler) SignalWithStartWorkflow(_ context.Context, id, signal string, arg any, opts client.StartWorkflowOptions,
	_ any, args ...any) (client.WorkflowRun, error) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.calls = append(f.calls, signalCall{ID: id, Signal: signal, Arg: arg, Opts: opts, Input: args[0].(onboardingflow.Input)})
	return nil, nil
}

// SignalWorkflow records a payment signal like a SignalWithStart.
func (f *fakeSignaler) SignalWorkflow(_ context.Context, id, _, signal string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.calls = append(f.calls, signalCall{ID: id, Signal: signal, Arg: arg})
	return nil
}

func (f *fakeSignaler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

type rig struct {
	pool *pgxpool.Pool
	sig  *fakeSignaler
	srv  *httptest.Server
}

func newRig(t *testing.T, secrets ...string) *rig {
	t.Helper()
	pool := testenv.Postgres(t)
	sig := &fakeSignaler{}
	if len(secrets) == 0 {
		secrets = []string{secretNew}
	}
	rc, err := New(Config{Secrets: secrets, TaskQueue: "test-q", MaxBodyBytes: 64 << 10, OnboardingDeadline: time.Hour},
		pool, sig, merchant.NewStore(pool))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler())
	t.Cleanup(srv.Close)
	return &rig{pool: pool, sig: sig, srv: srv}
}

func event(id, typ, account string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": "2023-10-16", "created": time.Now().Unix(),
		"account": account, "livemode": false,
		"data": map[string]any{"object": map[string]any{"id": account, "object": "account", "charges_enabled": false}},
	})
	return b
}

func sign(body []byte, secret string, at time.Time) string {
	return stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}

func (r *rig) post(t *testing.T, body []byte, sigHeader string) (int, answer) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+Path, bytes.NewReader(body))
	if sigHeader != "" {
		req.Header.Set("Stripe-Signature", sigHeader)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	_ = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

func (r *rig) rows(t *testing.T) int {
	var n int
	if err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM stripe_webhook_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestValidEventSignalsOnceWhenDeliveredTwice(t *testing.T) {
	r := newRig(t)
	body := event("evt_1TwiceDelivered", "account.updated", acmeAcct)
	code, a := r.post(t, body, sign(body, secretNew, time.Now()))
	if code != http.StatusOK || a.Status != StatusSignalled || a.WorkflowID != "onboarding/m_acme_goods" {
		t.Fatalf("first delivery: %d %+v", code, a)
	}
	code, a = r.post(t, body, sign(body, secretNew, time.Now()))
	if code != http.StatusOK || a.Status != StatusDuplicate {
		t.Fatalf("second delivery: %d %+v", code, a)
	}
	if r.sig.count() != 1 {
		t.Fatalf("signalled %d times", r.sig.count())
	}
	c := r.sig.calls[0]
	if c.ID != "onboarding/m_acme_goods" || c.Signal != onboardingflow.SignalAccountUpdated || c.Opts.TaskQueue != "test-q" ||
		c.Input.MerchantID != "m_acme_goods" || c.Input.Deadline != time.Hour || c.Input.Request.RequestID != "evt_1TwiceDelivered" {
		t.Fatalf("call %+v", c)
	}
	if sig := c.Arg.(onboardingflow.AccountUpdatedSignal); sig.EventID != "evt_1TwiceDelivered" || sig.AccountID != acmeAcct {
		t.Fatalf("signal %+v", sig)
	}
}

func TestConcurrentDuplicatesSignalOnce(t *testing.T) {
	r := newRig(t)
	r.sig.delay = 300 * time.Millisecond
	body := event("evt_1Concurrent", "account.updated", acmeAcct)
	var wg sync.WaitGroup
	statuses := make([]string, 4)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, a := r.post(t, body, sign(body, secretNew, time.Now()))
			statuses[i] = fmt.Sprint(code, a.Status)
		}()
	}
	wg.Wait()
	if r.sig.count() != 1 || r.rows(t) != 1 {
		t.Fatalf("signals %d rows %d statuses %v", r.sig.count(), r.rows(t), statuses)
	}
}

func TestRefusedDeliveriesStartNothing(t *testing.T) {
	r := newRig(t)
	good := event("evt_1Refused", "account.updated", acmeAcct)
	cases := []struct {
		name   string
		body   []byte
		header string
		code   int
		err    string
	}{
		{"no signature", good, "", 400, ErrMissingSignature},
		{"wrong secret", good, sign(good, "whsec_someoneElse000000000", time.Now()), 400, ErrBadSignature},
		{"tampered body", bytes.Replace(good, []byte(`"charges_enabled":false`), []byte(`"charges_enabled":true `), 1), sign(good, secretNew, time.Now()), 400, ErrBadSignature},
		{"stale timestamp", good, sign(good, secretNew, time.Now().Add(-10*time.Minute)), 400, ErrStaleTimestamp},
		{"timestamp 10 minutes ahead", good, sign(good, secretNew, time.Now().Add(10*time.Minute)), 400, ErrStaleTimestamp},
		{"garbage header", good, "t=abc,v1=zz", 400, ErrBadHeader},
		{"unknown event type", event("evt_1Charge", "charge.succeeded", acmeAcct), "", 400, ErrUnsupportedEvent},
		{"signed non-event", []byte(`{"hello":"world"}`), "", 400, ErrBadPayload},
		{"oversized body", append(good, bytes.Repeat([]byte(" "), 70<<10)...), "", 413, ErrBodyTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.header
			if h == "" && c.err != ErrMissingSignature {
				h = sign(c.body, secretNew, time.Now())
			}
			code, a := r.post(t, c.body, h)
			if code != c.code || a.Error != c.err || a.Message == "" {
				t.Fatalf("got %d %+v, want %d %s", code, a, c.code, c.err)
			}
		})
	}
	if r.sig.count() != 0 || r.rows(t) != 0 {
		t.Fatalf("refused deliveries left %d signals and %d rows", r.sig.count(), r.rows(t))
	}
	resp, err := http.Get(r.srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

func TestRotatedSecretsBothVerify(t *testing.T) {
	r := newRig(t, secretNew, secretOld)
	for i, secret := range []string{secretOld, secretNew} {
		body := event(fmt.Sprintf("evt_1Rotation%d", i), "account.updated", acmeAcct)
		if code, a := r.post(t, body, sign(body, secret, time.Now())); code != 200 || a.Status != StatusSignalled {
			t.Fatalf("secret %d: %d %+v", i, code, a)
		}
	}
	// Stripe signs with both secrets during a roll: one header, two v1s.
	body := event("evt_1RotationBoth", "account.updated", acmeAcct)
	ts := time.Now()
	h := sign(body, "whsec_retiredRetiredRetired000", ts) + ",v1=" + strings.SplitN(sign(body, secretOld, ts), "v1=", 2)[1]
	if code, a := r.post(t, body, h); code != 200 || a.Status != StatusSignalled {
		t.Fatalf("two signatures: %d %+v", code, a)
	}
}

func TestUnknownAccountIsAcknowledgedNotStarted(t *testing.T) {
	r := newRig(t)
	body := event("evt_1Unknown", "account.updated", "acct_1CwNobodyOwnsIt")
	code, a := r.post(t, body, sign(body, secretNew, time.Now()))
	if code != 200 || a.Status != StatusIgnored || r.sig.count() != 0 || r.rows(t) != 1 {
		t.Fatalf("%d %+v signals %d", code, a, r.sig.count())
	}
}

// When Temporal is unavailable the delivery fails with 503 and leaves no
// dedup row, so Stripe's retry is processed, not taken for a duplicate.
func TestTemporalFailureIsRetriedByStripe(t *testing.T) {
	r := newRig(t)
	r.sig.err = errors.New("temporal unavailable")
	body := event("evt_1Retry", "account.updated", acmeAcct)
	if code, a := r.post(t, body, sign(body, secretNew, time.Now())); code != 503 || a.Error != ErrUnavailable {
		t.Fatalf("%d %+v", code, a)
	}
	if r.rows(t) != 0 {
		t.Fatal("a failed delivery must not be recorded")
	}
	r.sig.err = nil
	if code, a := r.post(t, body, sign(body, secretNew, time.Now())); code != 200 || a.Status != StatusSignalled {
		t.Fatalf("retry: %d %+v", code, a)
	}
}

func TestParseSecrets(t *testing.T) {
	got := ParseSecrets(" whsec_a , ,whsec_b,")
	if len(got) != 2 || got[0] != "whsec_a" || got[1] != "whsec_b" {
		t.Fatalf("%q", got)
	}
}
