package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// The attack suite (docs/mcp.md#attack-suite): one test per finding of
// the gateway's review, each sending what a hostile or merely official
// client would, through the real gateway on a real stack.

// gatewayWith serves a second gateway on the stack's client and tokens,
// with opts changed by mod; it returns its /mcp URL.
func (s *stack) gatewayWith(t *testing.T, c *client.Client, mod func(*gateway.Options)) string {
	t.Helper()
	if c == nil {
		c = s.client
	}
	o := gateway.Options{Client: c, Tokens: s.tokens, Specs: s.Deps.Registry.Specs(), Schemas: schemas.FS,
		Config: wiringtest.Config(s.TaskQueue, s.EvidenceKey), ProgressEvery: 200 * time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	gw, err := gateway.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, gw).URL + gateway.Path
}

// send sends one raw HTTP request and reads the JSON-RPC answer.
func send(t *testing.T, method, url, token string, body []byte, header map[string]string) rpcReply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw := rpcBody(resp)
	r := rpcReply{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("HTTP %d answer is not JSON-RPC (%v): %.300s", resp.StatusCode, err, raw)
	}
	return r
}

// wantError checks an error answer: HTTP status, JSON-RPC code, reason,
// and the data every error carries (checkErrorData).
func wantError(t *testing.T, what string, r rpcReply, status int, code int64, reason wire.Reason) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("%s: no error (HTTP %d): %s", what, r.status, r.Result)
	}
	if r.status != status || r.Error.Code != code || r.Error.Data.Reason != reason {
		t.Fatalf("%s: HTTP %d %d %s (%s), want HTTP %d %d %s", what, r.status, r.Error.Code, r.Error.Data.Reason,
			r.Error.Message, status, code, reason)
	}
	checkErrorData(t, r)
}

const listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// TestAttackOfficialClientReadsErrors (finding 3): a well-formed request
// that is refused is answered with its JSON-RPC response, HTTP 200, so a
// client that treats any non-2xx as a transport failure still reads code
// and error.data; the transport's own refusals keep their 4xx, with
// error.data too. (TestMCPOfficialTypeScriptClient is the same with the
// TypeScript SDK.)
func TestAttackOfficialClientReadsErrors(t *testing.T) {
	s := newStack(t)
	limited := s.newToken(t, gateway.Actor{ID: "pricing-only", Tools: []string{"pricing.get_realtime_quote"}})
	unknown := []byte(`{"jsonrpc":"2.0","id":"u1","method":"tools/call","params":{"name":"memory_store","arguments":{}}}`)
	wantError(t, "unknown tool", send(t, "POST", s.url, s.token, unknown, nil), 200, wire.CodeInvalidParams, wire.ReasonUnknownTool)
	wantError(t, "unknown method", send(t, "POST", s.url, s.token, []byte(`{"jsonrpc":"2.0","id":2,"method":"memory/store"}`), nil),
		200, wire.CodeMethodNotFound, wire.ReasonMethodNotFound)
	wantError(t, "allow-list", send(t, "POST", s.url, limited.Token, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"knowledge.cite","arguments":{}}}`), nil),
		200, wire.CodeBusiness, wire.ReasonPolicyReject)
	// The transport's refusals: 4xx, and still JSON-RPC with error.data.
	r := send(t, "POST", s.url, "", []byte(listBody), nil)
	wantError(t, "no token", r, 401, wire.CodeBusiness, wire.ReasonAuthFailed)
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("401 without WWW-Authenticate: %v", r.header)
	}
	wantError(t, "unparseable", send(t, "POST", s.url, s.token, []byte(`{"jsonrpc":`), nil), 400, wire.CodeParseError, wire.ReasonParseError)
	r = send(t, "GET", s.url, s.token, nil, nil)
	wantError(t, "GET", r, 405, wire.CodeInvalidRequest, wire.ReasonHTTPMethodNotAllowed)
	if r.header.Get("Allow") != "POST" {
		t.Fatalf("405 without Allow: POST: %v", r.header)
	}
	wantError(t, "Accept", send(t, "POST", s.url, s.token, []byte(listBody), map[string]string{"Accept": "text/html"}),
		406, wire.CodeInvalidRequest, wire.ReasonNotAcceptable)
	wantError(t, "Content-Type", send(t, "POST", s.url, s.token, []byte(listBody), map[string]string{"Content-Type": "text/plain"}),
		415, wire.CodeInvalidRequest, wire.ReasonUnsupportedMediaType)
	// A refusal of the SDK's own (an unsupported protocol version) is
	// turned into JSON-RPC with data too.
	wantError(t, "protocol version", send(t, "POST", s.url, s.token, []byte(listBody), map[string]string{"MCP-Protocol-Version": "1999-01-01"}),
		400, wire.CodeInvalidRequest, wire.ReasonInvalidRequest)
}

// TestAttackForeignOriginIs403 (finding 4): a browser page on another
// origin (DNS rebinding, a malicious site) is refused with 403 whatever it
// sends, a valid token included; the configured origin and clients that
// send no Origin (not browsers) pass.
func TestAttackForeignOriginIs403(t *testing.T) {
	s := newStack(t)
	url := s.gatewayWith(t, nil, func(o *gateway.Options) { o.AllowedOrigins = []string{"https://agents.example"} })
	legacy := []byte(`{"tool":"knowledge.cite","arguments":{"claim":"payouts"}}`)
	for _, origin := range []string{"http://evil.example", "null", "https://agents.example.evil.example", "http://127.0.0.1:1"} {
		wantError(t, "Origin "+origin, send(t, "POST", url, s.token, []byte(listBody), map[string]string{"Origin": origin}),
			403, wire.CodeInvalidRequest, wire.ReasonOriginNotAllowed)
		wantError(t, "legacy body, Origin "+origin, send(t, "POST", url, s.token, legacy, map[string]string{"Origin": origin}),
			403, wire.CodeInvalidRequest, wire.ReasonOriginNotAllowed)
	}
	for _, origin := range []string{"https://agents.example", ""} {
		if r := send(t, "POST", url, s.token, []byte(listBody), map[string]string{"Origin": origin}); r.Error != nil || r.status != 200 {
			t.Fatalf("Origin %q refused: HTTP %d %+v", origin, r.status, r.Error)
		}
	}
}

// TestAttackLegacyBodyHostCheck (finding 4): the Host check against DNS
// rebinding (a loopback server answers only loopback names) holds for the
// legacy {"tool","arguments"} body too, which never reaches the SDK.
func TestAttackLegacyBodyHostCheck(t *testing.T) {
	s := newStack(t)
	legacy := []byte(`{"tool":"knowledge.cite","arguments":{"claim":"payouts"}}`)
	host := map[string]string{"Host": "evil.example"}
	wantError(t, "legacy body, foreign Host", send(t, "POST", s.url, s.token, legacy, host), 403, wire.CodeInvalidRequest, wire.ReasonHostNotAllowed)
	wantError(t, "JSON-RPC, foreign Host", send(t, "POST", s.url, s.token, []byte(listBody), host), 403, wire.CodeInvalidRequest, wire.ReasonHostNotAllowed)
	if r := send(t, "POST", s.url, s.token, legacy, map[string]string{"Host": "localhost"}); r.Error != nil || r.IsError {
		t.Fatalf("legacy body on localhost: %+v", r.Error)
	}
}

// rawConn opens a TCP connection to the gateway of url.
func rawConn(t *testing.T, url string) net.Conn {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), gateway.Path)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// answeredWithin reads the first status line the server sends on c, or
// fails if none comes (or the connection stays open) within limit.
func answeredWithin(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && line == "" {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the connection was still held after %s", limit)
		}
		return "closed"
	}
	return strings.TrimSpace(line)
}

// closedWithin fails unless the server closes c within limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still held the connection after %s", limit)
	}
}

// TestAttackSlowClientsCannotHoldConnections (finding 4): a half-sent
// body, authenticated or not, and half-sent headers are cut within their
// timeouts; oversized headers are refused at once (431).
func TestAttackSlowClientsCannotHoldConnections(t *testing.T) {
	s := newStack(t)
	url := s.gatewayWith(t, nil, func(o *gateway.Options) { o.BodyTimeout = time.Second })
	head := func(token string) string {
		return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			"Authorization: Bearer " + token + "\r\nContent-Length: 4000\r\n\r\n{\"jsonrpc\":\"2.0\","
	}
	// Unauthenticated: answered 401 without waiting for the body.
	c := rawConn(t, url)
	_, _ = io.WriteString(c, head("cwt_not-a-token"))
	if got := answeredWithin(t, c, 3*time.Second); !strings.Contains(got, " 401 ") {
		t.Fatalf("half-sent unauthenticated body: %q", got)
	}
	closedWithin(t, c, 3*time.Second)
	// Authenticated: the body timeout answers 408.
	c = rawConn(t, url)
	_, _ = io.WriteString(c, head(s.token))
	if got := answeredWithin(t, c, 4*time.Second); !strings.Contains(got, " 408 ") {
		t.Fatalf("half-sent authenticated body: %q", got)
	}
	closedWithin(t, c, 3*time.Second)
	// Half-sent headers: the read-header timeout closes the connection.
	c = rawConn(t, url)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	if got := answeredWithin(t, c, gateway.ReadHeaderTimeout+3*time.Second); got != "closed" && !strings.Contains(got, " 408 ") {
		t.Fatalf("half-sent headers: %q", got)
	}
	// Oversized headers: 431 before any handler runs.
	req, _ := http.NewRequest("POST", url, strings.NewReader(listBody))
	req.Header.Set("X-Pad", strings.Repeat("a", 4*gateway.MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a %d-byte header: HTTP %d", 4*gateway.MaxHeaderBytes, resp.StatusCode)
	}
}

// fromAddr is an HTTP client whose connections come from local IP addr
// (any 127.x.y.z is this host's loopback).
func fromAddr(addr string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestAttackTokenGuessingIsThrottled (finding 4): a client guessing
// tokens is answered 429 with Retry-After after a few failures, before its
// guesses are looked up; another client is not affected.
func TestAttackTokenGuessingIsThrottled(t *testing.T) {
	s := newStack(t)
	url := s.gatewayWith(t, nil, func(o *gateway.Options) { o.AuthFailureBurst, o.AuthFailureRefill = 5, time.Minute })
	guess := func(c *http.Client, token string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(listBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	attacker := fromAddr("127.0.0.2")
	statuses := map[int]int{}
	var throttled *http.Response
	for i := 0; i < 200; i++ {
		resp := guess(attacker, "cwt_guess_"+strings.Repeat("0", i%7))
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests {
			throttled = resp
		}
	}
	if statuses[401] != 5 || statuses[429] != 195 || throttled.Header.Get("Retry-After") == "" {
		t.Fatalf("200 guesses answered %v (Retry-After %q): want 5 × 401, then 429", statuses, throttled.Header.Get("Retry-After"))
	}
	if resp := guess(fromAddr("127.0.0.3"), s.token); resp.StatusCode != http.StatusOK {
		t.Fatalf("another client's valid token: HTTP %d", resp.StatusCode)
	}
}

// TestAttackExpiredTokenIsRefused (finding 4): a token past its expiry is
// refused like a revoked one (401 AUTH_FAILED).
func TestAttackExpiredTokenIsRefused(t *testing.T) {
	s := newStack(t)
	at := time.Now().Add(2 * time.Second)
	nt := s.newToken(t, gateway.Actor{ID: "brief-agent", ExpiresAt: &at})
	if r := send(t, "POST", s.url, nt.Token, []byte(listBody), nil); r.Error != nil {
		t.Fatalf("a live token refused: %+v", r.Error)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := send(t, "POST", s.url, nt.Token, []byte(listBody), nil)
		if r.Error != nil {
			wantError(t, "expired token", r, 401, wire.CodeBusiness, wire.ReasonAuthFailed)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the token was still accepted 13 s after its expiry")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAttackContractPoints (finding 5): the draft order tools have output
// schemas, ship_to.name is required, support.record_approval is not
// announced read-only; tools/call sent as a notification and an id of
// null are refused with their reason and error.data.
func TestAttackContractPoints(t *testing.T) {
	s := newStack(t)
	res, err := s.connect(t, s.token, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		out, _ := tl.OutputSchema.(map[string]any)
		if out == nil || out["type"] != "object" {
			t.Fatalf("%s has no output schema: %v", tl.Name, tl.OutputSchema)
		}
		if tl.Name == gateway.ToolDraftStart {
			in, _ := tl.InputSchema.(map[string]any)
			shipTo, _ := in["properties"].(map[string]any)["ship_to"].(map[string]any)
			if !strings.Contains(strings.Join(toStrings(shipTo["required"]), ","), "name") {
				t.Fatalf("ship_to.name is not required: %v", shipTo["required"])
			}
		}
		if tl.Name == "support.record_approval" && (tl.Annotations == nil || tl.Annotations.ReadOnlyHint) {
			t.Fatalf("support.record_approval is announced read-only: %+v", tl.Annotations)
		}
	}
	notification := []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"knowledge.cite","arguments":{"claim":"x"}}}`)
	wantError(t, "tools/call as a notification", send(t, "POST", s.url, s.token, notification, nil), 400, wire.CodeInvalidRequest, wire.ReasonRequestNeedsID)
	// A real notification is accepted with 202 and no body.
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a notification: HTTP %d, want 202", resp.StatusCode)
	}
	r := send(t, "POST", s.url, s.token, []byte(`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`), nil)
	wantError(t, "id null", r, 400, wire.CodeInvalidRequest, wire.ReasonInvalidRequest)
	if string(r.ID) != "null" || r.Error.Data.Details["param"] != "id" {
		t.Fatalf("id null: id %s details %v", r.ID, r.Error.Data.Details)
	}
}

// TestAttackOversizedCallIsNotRetryable (finding 5): one call larger than
// the actor's whole byte budget is refused at once, not retryable (no
// "retry in 60 s" that never succeeds), and spends nothing.
func TestAttackOversizedCallIsNotRetryable(t *testing.T) {
	s := newStack(t)
	small := s.newToken(t, gateway.Actor{ID: "small-bytes", BytesPerMinute: 512})
	sess := s.connect(t, small.Token, nil)
	res, env := call(t, sess, "knowledge.cite", map[string]any{"claim": strings.Repeat("payouts ", 100)})
	if !res.IsError || env.Error == nil || env.Error.Code != toolkit.InvalidArgument || env.Error.CanRetry || env.Error.RetryAfterSeconds != 0 {
		t.Fatalf("oversized call: %+v", env.Error)
	}
	if res, env := call(t, sess, "knowledge.cite", map[string]any{"claim": "payouts"}); res.IsError {
		t.Fatalf("a call within the budget after the refusal: %+v", env.Error)
	}
}

// cutProxy forwards TCP to target until cut.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

// cut closes the listener and every connection: Temporal is unreachable.
func (p *cutProxy) cut() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// TestAttackDraftStatusWithTemporalDown (finding 5): draft_order.status
// when Temporal cannot be reached is the dependency error -32001
// TEMPORAL_UNAVAILABLE (retryable), not a TIMEOUT result.
func TestAttackDraftStatusWithTemporalDown(t *testing.T) {
	s := newStack(t)
	proxy := newCutProxy(t, testenv.TemporalAddress())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.New(ctx, client.Options{Temporal: sdkclient.Options{HostPort: proxy.ln.Addr().String()}, TaskQueue: s.TaskQueue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	url := s.gatewayWith(t, c, nil)
	status := []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"draft_order.status","arguments":{"idempotency_key":"down-order-1"}}}`)
	// Up: an unknown order is NOT_FOUND, a result.
	if r := post(t, url, s.token, status, nil); r.Error != nil || !strings.Contains(string(r.Result), "NOT_FOUND") {
		t.Fatalf("with Temporal up: %+v %s", r.Error, r.Result)
	}
	proxy.cut()
	start := time.Now()
	r := post(t, url, s.token, status, nil)
	wantError(t, "status with Temporal down", r, 200, wire.CodeDependency, wire.ReasonTemporalUnavailable)
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("took %s", el)
	}
}

// TestAttackTenantReachesOnlyItsMerchants (finding 6): a token bound to a
// tenant reads its own merchants and Stripe accounts and is refused
// FORBIDDEN for another tenant's (or the platform's), with evidence of
// each refusal; its draft orders are its own.
func TestAttackTenantReachesOnlyItsMerchants(t *testing.T) {
	s := newStack(t)
	acme := s.newToken(t, gateway.Actor{ID: "acme-agent", Tenant: "tenant_acme", CallsPerMinute: 1000})
	harbor := s.newToken(t, gateway.Actor{ID: "harbor-agent", Tenant: "tenant_harbor", CallsPerMinute: 1000})
	sess := s.connect(t, acme.Token, nil)
	ctx := context.Background()
	allowed := []struct {
		tool string
		args map[string]any
	}{
		{"merchant.get_row", map[string]any{"merchant_id": "m_acme_goods"}},
		{"merchant.get_row", map[string]any{"user_session_id": "sess_demo_acme_0001"}},
		{"stripe.get_account_status", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"}},
		{"stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001", "idempotency_key": newKey("acme-login")}},
	}
	for _, c := range allowed {
		if res, env := call(t, sess, c.tool, c.args); res.IsError {
			t.Fatalf("%s %v of its own tenant: %+v", c.tool, c.args, env.Error)
		}
	}
	refused := []struct {
		tool string
		args map[string]any
	}{
		{"merchant.get_row", map[string]any{"merchant_id": "m_blue_harbor"}},
		{"merchant.get_row", map[string]any{"merchant_id": "m_jane_crafts"}},
		{"merchant.get_row", map[string]any{"user_session_id": "sess_demo_blue_0001"}},
		{"stripe.get_account_status", map[string]any{"stripe_account_id": "acct_1CwBlueHarbor001"}},
		{"stripe.create_relink_url", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": newKey("acme-relink")}},
		{"stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwBlueHarbor001", "idempotency_key": newKey("acme-login")}},
	}
	for _, c := range refused {
		res, env := call(t, sess, c.tool, c.args)
		if !res.IsError || env.Error == nil || env.Error.Code != toolkit.Forbidden {
			t.Fatalf("%s %v of another tenant: isError %v %+v", c.tool, c.args, res.IsError, env.Error)
		}
		if strings.Contains(env.Error.Message, "Blue Harbor") || strings.Contains(env.Error.Message, "Jane") {
			t.Fatalf("the refusal names the other tenant's merchant: %s", env.Error.Message)
		}
		rec, err := s.Store.Get(ctx, env.SnapshotID())
		if err != nil || rec.Tool != c.tool {
			t.Fatalf("%s: the refusal left no evidence (%q): %v", c.tool, env.SnapshotID(), err)
		}
	}
	// Draft orders: another tenant's key names no order of this one.
	key := newKey("acme-order")
	start := &mcp.CallToolParams{Name: gateway.ToolDraftStart, Arguments: map[string]any{
		"idempotency_key": key, "currency": "EUR", "wait_seconds": 30,
		"items":   []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1}},
		"ship_to": map[string]any{"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"},
	}}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := sess.CallTool(cctx, start); err != nil {
		t.Fatal(err)
	}
	res, err := s.connect(t, harbor.Token, nil).CallTool(cctx, &mcp.CallToolParams{Name: gateway.ToolDraftStatus, Arguments: map[string]any{"idempotency_key": key}})
	if err != nil {
		t.Fatal(err)
	}
	var v gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &v)
	if !res.IsError || v.Error == nil || v.Error.Code != toolkit.NotFound || v.Total != nil {
		t.Fatalf("another tenant read the draft order: %+v", v)
	}
}

// TestAttackAgentNamedLikeATenant (docs/mcp.md#tenants): an agent token
// without a tenant has its own id as user id; one named like a tenant
// would share the tenant's draft orders and tool calls, so such a token
// (or a tenant named like such an agent) is not made.
func TestAttackAgentNamedLikeATenant(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	if _, err := s.issuer.Create(ctx, gateway.Actor{ID: "acme-shop", Tenant: "tenant_clash"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.issuer.Create(ctx, gateway.Actor{ID: "tenant_clash"}); !errors.Is(err, gateway.ErrUserIDClash) {
		t.Fatalf("an agent named like a tenant: %v", err)
	}
	if _, err := s.issuer.Create(ctx, gateway.Actor{ID: "lonely-agent"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.issuer.Create(ctx, gateway.Actor{ID: "other-agent", Tenant: "lonely-agent"}); !errors.Is(err, gateway.ErrUserIDClash) {
		t.Fatalf("a tenant named like an agent: %v", err)
	}
}
