package stripetools

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/toolkit"
)

const acct = "acct_1CwFaultTest0001"

func fakeRig(t *testing.T) (*stripefake.Server, *rig) {
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	fake.SetAccount(acct, stripefake.Account{CurrentlyDue: []string{"external_account"}})
	return fake, newRig(t, fake.URL)
}

func statusIn(extra ...any) map[string]any {
	in := map[string]any{"stripe_account_id": acct}
	for i := 0; i+1 < len(extra); i += 2 {
		in[extra[i].(string)] = extra[i+1]
	}
	return in
}

func wantCode(t *testing.T, err error, code toolkit.Code, upstream string) *toolkit.Error {
	t.Helper()
	te := toolkit.AsError(err)
	if te == nil || te.Code != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if upstream != "" && te.Details["upstream_code"] != upstream {
		t.Fatalf("upstream_code = %v, want %s", te.Details["upstream_code"], upstream)
	}
	return te
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	fake, r := fakeRig(t)
	fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: 429, RetryAfter: "2", Times: 1})
	_, err := r.inv.Invoke(ctxT(t), ToolAccountStatus, request(""), statusIn())
	te := wantCode(t, err, toolkit.RateLimited, "rate_limited")
	if te.RetryAfterSeconds != 2 || te.Details["retry_after_ms"] != int64(2000) || !te.CanRetry {
		t.Fatalf("rate limit error = %+v", te)
	}
	// The activity turns RetryAfterSeconds into the next retry's delay
	// (activities.ApplicationError, tested there).
	if n := fake.Count(stripefake.GetAccount); n != 1 {
		t.Fatalf("stripe-go must not retry by itself: %d requests", n)
	}
	// The 429 was not cached: the next call reaches Stripe and succeeds.
	if _, err := r.inv.Invoke(ctxT(t), ToolAccountStatus, request(""), statusIn()); err != nil {
		t.Fatal(err)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": DefaultRetryAfter, "3": 3 * time.Second, "0": DefaultRetryAfter, "junk": DefaultRetryAfter,
		"3600": maxRetryAfter,
		now.Add(5 * time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT"): 5 * time.Second,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestServerErrorIsRetryableUpstreamError(t *testing.T) {
	fake, r := fakeRig(t)
	fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: 500, Times: 1})
	_, err := r.inv.Invoke(ctxT(t), ToolAccountStatus, request(""), statusIn())
	te := wantCode(t, err, toolkit.UpstreamError, "upstream_error")
	if !te.CanRetry || te.Details["http_status"] != 500 {
		t.Fatalf("error = %+v", te)
	}
	if n := fake.Count(stripefake.GetAccount); n != 1 {
		t.Fatalf("one activity attempt must be one request, got %d", n)
	}
}

func TestSlowStripeTimesOut(t *testing.T) {
	fake, r := fakeRig(t)
	fake.Inject(stripefake.GetAccount, stripefake.Fault{Delay: 10 * time.Second, Times: 1})
	start := time.Now()
	_, err := r.inv.Invoke(ctxT(t), ToolAccountStatus, request(""), statusIn())
	te := wantCode(t, err, toolkit.Timeout, "timeout")
	if el := time.Since(start); el < AccountStatusSpec().Timeout || el > AccountStatusSpec().Timeout+time.Second {
		t.Fatalf("gave up after %s, want the tool's %s", el, AccountStatusSpec().Timeout)
	}
	if !te.CanRetry {
		t.Fatal("a timeout is retryable")
	}
}

func TestUpstreamErrorMapping(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	_, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), map[string]any{"stripe_account_id": "acct_1CwUnknown0001"})
	wantCode(t, err, toolkit.NotFound, "not_found")
	_, err = r.inv.Invoke(ctx, ToolRelinkURL, request("onb-unknown-1"), map[string]any{"stripe_account_id": "acct_1CwUnknown0001"})
	wantCode(t, err, toolkit.NotFound, "invalid_account")
	_, err = r.inv.Invoke(ctx, ToolLoginLink, request("onb-unknown-2"), map[string]any{"stripe_account_id": "acct_1CwUnknown0001"})
	wantCode(t, err, toolkit.NotFound, "invalid_account")

	fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: 401, Times: 1})
	_, err = r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn("max_age_seconds", 0))
	if te := wantCode(t, err, toolkit.Unauthorized, "unauthorized"); te.CanRetry {
		t.Fatal("a refused key must not be retried")
	}
	// Lower-case upstream names never reach the caller as codes
	// (docs/errors.md#upstream-codes).
	for _, c := range []string{"not_found", "invalid_account", "rate_limited", "upstream_error"} {
		if toolkit.Code(c).Valid() {
			t.Fatalf("%s must not be a code", c)
		}
	}
}

func TestStatusCacheServesABurstWithOneCall(t *testing.T) {
	fake, r := fakeRig(t)
	fake.Inject(stripefake.GetAccount, stripefake.Fault{Delay: 200 * time.Millisecond, Times: 1})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	hits := make([]bool, 8)
	for i := range hits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn())
			if err != nil {
				t.Error(err)
				return
			}
			hits[i] = resp.Meta.CacheHit
		}()
	}
	wg.Wait()
	if n := fake.Count(stripefake.GetAccount); n != 1 {
		t.Fatalf("a burst of 8 made %d requests, want 1", n)
	}
	cached := 0
	for _, h := range hits {
		if h {
			cached++
		}
	}
	if cached != 7 {
		t.Fatalf("%d of 8 answers marked cache_hit, want 7", cached)
	}
	// A changed account is seen at once when the caller asks for a fresh read.
	fake.SetAccount(acct, stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	resp, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn("max_age_seconds", 0))
	if err != nil {
		t.Fatal(err)
	}
	var st AccountStatus
	_ = resp.Decode(&st)
	if !st.Enabled() || resp.Meta.CacheHit || fake.Count(stripefake.GetAccount) != 2 {
		t.Fatalf("fresh read: %+v cache_hit=%v requests=%d", st, resp.Meta.CacheHit, fake.Count(stripefake.GetAccount))
	}
}

func TestStatusCacheExpires(t *testing.T) {
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	fake.SetAccount(acct, stripefake.Account{})
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t, fake.URL, func(c *Config) { c.Now = clock; c.StatusCacheTTL = time.Hour })
	if r.client.cfg.StatusCacheTTL != MaxStatusCacheTTL {
		t.Fatalf("cache TTL %s must be capped at %s", r.client.cfg.StatusCacheTTL, MaxStatusCacheTTL)
	}
	ctx := ctxT(t)
	for i := 0; i < 3; i++ {
		if _, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	now = now.Add(MaxStatusCacheTTL)
	mu.Unlock()
	if _, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn()); err != nil {
		t.Fatal(err)
	}
	if n := fake.Count(stripefake.GetAccount); n != 2 {
		t.Fatalf("requests = %d, want 2 (one per cache lifetime)", n)
	}
}

func TestRelinkDeduplicatesABurst(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	fake.Inject(stripefake.AccountLink, stripefake.Fault{Delay: 200 * time.Millisecond, Times: 1})
	var wg sync.WaitGroup
	hashes := make([]string, 5)
	for i := range hashes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r.inv.Invoke(ctx, ToolRelinkURL, request(fmt.Sprintf("onb-burst-%d", i)), statusIn())
			if err != nil {
				t.Error(err)
				return
			}
			var l Link
			_ = resp.Decode(&l)
			hashes[i] = l.URLSHA256
		}()
	}
	wg.Wait()
	resp, err := r.inv.Invoke(ctx, ToolRelinkURL, request("onb-burst-later"), statusIn())
	if err != nil {
		t.Fatal(err)
	}
	var l Link
	_ = resp.Decode(&l)
	if n := fake.Count(stripefake.AccountLink); n != 1 {
		t.Fatalf("burst made %d account links, want 1", n)
	}
	for _, h := range append(hashes, l.URLSHA256) {
		if h != hashes[0] || h == "" {
			t.Fatalf("burst got different links: %v", hashes)
		}
	}
	if !l.Reused || !resp.Meta.CacheHit {
		t.Fatalf("a reused link must say so: %+v", l)
	}
	form := fake.Requests(stripefake.AccountLink)[0].Form
	if form.Get("type") != "account_onboarding" || form.Get("return_url") != "https://shop.example/onboarding/return" ||
		form.Get("refresh_url") != "https://shop.example/onboarding/refresh" {
		t.Fatalf("account link form = %v", form)
	}
}

func TestLoginLinkRepeatMakesANewOne(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	link := func(key string) Link {
		resp, err := r.inv.Invoke(ctx, ToolLoginLink, request(key), statusIn())
		if err != nil {
			t.Fatal(err)
		}
		var l Link
		_ = resp.Decode(&l)
		return l
	}
	a, b := link("onb-dash-1"), link("onb-dash-2")
	if a.URLSHA256 == b.URLSHA256 || fake.Count(stripefake.LoginLink) != 2 {
		t.Fatal("two clicks must make two login links")
	}
	// A retry of the same step (same idempotency key) gets Stripe's
	// stored answer, not a third link.
	if c := link("onb-dash-2"); c.URLSHA256 != b.URLSHA256 {
		t.Fatal("a retried step must get the same login link")
	}
}

func TestPostsCarryScopedIdempotencyKeys(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	req := request("onb-4f2a9c1d7e6b5a30")
	if _, err := r.inv.Invoke(ctx, ToolRelinkURL, req, statusIn()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inv.Invoke(ctx, ToolLoginLink, req, statusIn()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn()); err != nil {
		t.Fatal(err)
	}
	al, ll, get := fake.Requests(stripefake.AccountLink), fake.Requests(stripefake.LoginLink), fake.Requests(stripefake.GetAccount)
	if al[0].IdempotencyKey != StripeIdempotencyKey(ToolRelinkURL, req) || ll[0].IdempotencyKey != StripeIdempotencyKey(ToolLoginLink, req) {
		t.Fatalf("idempotency keys = %q, %q", al[0].IdempotencyKey, ll[0].IdempotencyKey)
	}
	if al[0].IdempotencyKey == ll[0].IdempotencyKey {
		t.Fatal("keys must be scoped by tool")
	}
	other := req
	other.UserID = "u_other"
	if StripeIdempotencyKey(ToolRelinkURL, other) == al[0].IdempotencyKey {
		t.Fatal("keys must be scoped by user")
	}
	if get[0].IdempotencyKey != "" && !strings.HasPrefix(get[0].IdempotencyKey, "cw-") {
		t.Fatalf("unexpected key on GET: %q", get[0].IdempotencyKey)
	}
	// A write tool refuses to run without a key (preflight).
	_, err := r.inv.Invoke(ctx, ToolRelinkURL, request(""), statusIn())
	wantCode(t, err, toolkit.InvalidArgument, "")
}

func TestRelinkRefusesForeignLandingPages(t *testing.T) {
	fake, r := fakeRig(t)
	_, err := r.inv.Invoke(ctxT(t), ToolRelinkURL, request("onb-foreign-1"),
		statusIn("return_url", "https://evil.example/phish"))
	wantCode(t, err, toolkit.InvalidArgument, "")
	if fake.Count("") != 0 {
		t.Fatal("a refused request must not reach Stripe")
	}
	if _, err := r.inv.Invoke(ctxT(t), ToolRelinkURL, request("onb-own-1"),
		statusIn("return_url", "https://shop.example/onboarding/return?step=2")); err != nil {
		t.Fatalf("same-origin return_url: %v", err)
	}
}

func TestDryRunMakesNoLink(t *testing.T) {
	fake, r := fakeRig(t)
	req := request("onb-dry-run-1")
	req.DryRun = true
	for _, tool := range []string{ToolRelinkURL, ToolLoginLink} {
		resp, err := r.inv.Invoke(ctxT(t), tool, req, statusIn())
		if err != nil {
			t.Fatal(err)
		}
		var l Link
		_ = resp.Decode(&l)
		if !l.DryRun || l.URLSHA256 != "" {
			t.Fatalf("%s dry run = %+v", tool, l)
		}
	}
	if fake.Count("") != 0 {
		t.Fatal("a dry run must not reach Stripe")
	}
}

// TestLinksNeverLeak: the link (a bearer secret) and the API key appear in
// no log line, no envelope, no clear evidence; the link exists only in the
// raw output the evidence store encrypts, together with its hash.
func TestLinksNeverLeak(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	var envelopes []string
	for i, tool := range []string{ToolRelinkURL, ToolLoginLink, ToolLoginLink} {
		resp, err := r.inv.Invoke(ctx, tool, request(fmt.Sprintf("onb-leak-%d", i)), statusIn())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(resp)
		envelopes = append(envelopes, string(b))
	}
	// Failures log too: make some.
	fake.Inject(stripefake.AccountLink, stripefake.Fault{Status: 500, Times: 1})
	_, _ = r.inv.Invoke(ctx, ToolRelinkURL, request("onb-leak-fail"), map[string]any{"stripe_account_id": "acct_1CwOther0001"})
	fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: 429, RetryAfter: "1", Times: 1})
	_, _ = r.inv.Invoke(ctx, ToolAccountStatus, request(""), statusIn())

	var urls []string
	for _, s := range r.sink.all() {
		if len(s.RawOutput) == 0 {
			t.Fatalf("%s: no raw output kept for encryption", s.Tool)
		}
		var raw, clear Link
		_ = json.Unmarshal(s.RawOutput, &raw)
		_ = json.Unmarshal(s.Output, &clear)
		if !strings.HasPrefix(raw.Secret, "https://connect.stripe.test/") || URLHash(raw.Secret) != raw.URLSHA256 {
			t.Fatalf("raw output = %s", s.RawOutput)
		}
		if clear.Secret != "***" || clear.URLSHA256 != raw.URLSHA256 || clear.ExpiresAt == "" {
			t.Fatalf("clear evidence = %s", s.Output)
		}
		urls = append(urls, raw.Secret)
	}
	if len(urls) != 3 {
		t.Fatalf("%d links recorded, want 3", len(urls))
	}
	forbidden := append([]string{testKey, "Bearer ", "Authorization"}, urls...)
	for _, u := range urls {
		forbidden = append(forbidden, u[strings.LastIndex(u, "/")+1:]) // the token part alone
	}
	if r.logs.Len() == 0 {
		t.Fatal("no logs captured")
	}
	for _, e := range r.logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			line += " " + k + "=" + fmt.Sprint(v)
		}
		for _, f := range forbidden {
			if strings.Contains(line, f) {
				t.Fatalf("log line leaks %q: %s", f, line)
			}
		}
	}
	for _, env := range envelopes {
		for _, f := range forbidden {
			if strings.Contains(env, f) {
				t.Fatalf("envelope leaks %q: %s", f, env)
			}
		}
	}
	_ = secretField
}

// force_new skips the burst reuse: the merchant used the last link.
func TestRelinkForceNew(t *testing.T) {
	fake, r := fakeRig(t)
	ctx := ctxT(t)
	a, err := r.inv.Invoke(ctx, ToolRelinkURL, request("onb-force-1"), statusIn())
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.inv.Invoke(ctx, ToolRelinkURL, request("onb-force-2"), statusIn("force_new", true))
	if err != nil {
		t.Fatal(err)
	}
	var la, lb Link
	_ = a.Decode(&la)
	_ = b.Decode(&lb)
	if la.URLSHA256 == lb.URLSHA256 || lb.Reused || fake.Count(stripefake.AccountLink) != 2 {
		t.Fatalf("force_new reused a link: %+v %+v", la, lb)
	}
}
