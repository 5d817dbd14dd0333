package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// rpcReply is a raw JSON-RPC answer.
type rpcReply struct {
	status int
	header http.Header
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    wire.ErrorData `json:"data"`
	} `json:"error"`
	// legacy answers
	CorrelationID string `json:"correlation_id"`
	IsError       bool   `json:"isError"`
}

// post sends body to the gateway as a plain HTTP client would.
func post(t *testing.T, url, token string, body []byte, header map[string]string) rpcReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw := rpcBody(resp)
	r := rpcReply{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("answer is not JSON (%v): %.300s", err, raw)
		}
	}
	return r
}

var corrPattern = regexp.MustCompile(`^corr-[0-9a-f]{16}$`)

// TestMCPContractInvariants is docs/mcp.md's error model and invariants as
// a table: each row names the
// invariant it checks, sends a raw HTTP request, and wants one JSON-RPC
// error (or none). Every error is also checked against MCP-INV-04/05/06/08
// and ERR-INV-01/02/05/06 (checkErrorData).
func TestMCPContractInvariants(t *testing.T) {
	s := newStack(t)
	limited := s.newToken(t, gateway.Actor{ID: "pricing-only", Tools: []string{"pricing.get_realtime_quote"}})
	revoked := s.newToken(t, gateway.Actor{ID: "gone-agent"})
	if ok, err := s.issuer.Revoke(context.Background(), revoked.Actor.TokenID); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	call := func(name string, args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + name + `,"arguments":` + args + `}}`)
	}
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), bytes.Repeat([]byte("x"), wire.MaxBodyBytes)...)
	big = append(big, []byte(`"}}`)...)
	cases := []struct {
		invariant string
		token     string
		body      []byte
		code      int64
		reason    wire.Reason
		status    int
	}{
		{"MCP-INV-01 parse error", s.token, []byte(`{"jsonrpc":"2.0",`), wire.CodeParseError, wire.ReasonParseError, 400},
		{"MCP-INV-01 invalid UTF-8", s.token, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\xfe\"}"), wire.CodeParseError, wire.ReasonParseError, 400},
		{"MCP-INV-01 not an object", s.token, []byte(`"tools/list"`), wire.CodeInvalidRequest, wire.ReasonInvalidRequest, 400},
		{"MCP-INV-01 wrong version", s.token, []byte(`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`), wire.CodeInvalidRequest, wire.ReasonInvalidRequest, 400},
		{"MCP-INV-01 no method", s.token, []byte(`{"jsonrpc":"2.0","id":1}`), wire.CodeInvalidRequest, wire.ReasonInvalidRequest, 400},
		{"MCP-INV-01 id not a scalar", s.token, []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`), wire.CodeInvalidRequest, wire.ReasonInvalidRequest, 400},
		{"MCP-INV-01 batch array", s.token, []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`), wire.CodeInvalidRequest, wire.ReasonBatchNotSupported, 400},
		{"MCP-INV-01 nesting", s.token, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + deep + `}}`), wire.CodeInvalidRequest, wire.ReasonNestingTooDeep, 400},
		{"MCP-INV-01 body over 1 MiB", s.token, big, wire.CodeInvalidRequest, wire.ReasonRequestTooLarge, 400},
		{"MCP-INV-01 unknown method", s.token, []byte(`{"jsonrpc":"2.0","id":1,"method":"memory/store"}`), wire.CodeMethodNotFound, wire.ReasonMethodNotFound, 200},
		{"MCP-INV-03 tools/call without name", s.token, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}`), wire.CodeInvalidParams, wire.ReasonMissingRequiredParam, 200},
		{"MCP-INV-03 tools/call without params", s.token, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`), wire.CodeInvalidParams, wire.ReasonMissingRequiredParam, 200},
		{"MCP-INV-03 name not a string", s.token, call(`42`, `{}`), wire.CodeInvalidParams, wire.ReasonInvalidParamType, 200},
		{"MCP-INV-03 arguments not an object", s.token, call(`"pricing.get_realtime_quote"`, `[1]`), wire.CodeInvalidParams, wire.ReasonInvalidParamType, 200},
		{"MCP-INV-03 unknown tool", s.token, call(`"memory_store"`, `{}`), wire.CodeInvalidParams, wire.ReasonUnknownTool, 200},
		{"AUTH missing token", "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), wire.CodeBusiness, wire.ReasonAuthFailed, 401},
		{"AUTH unknown token", "cwt_not-a-token", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), wire.CodeBusiness, wire.ReasonAuthFailed, 401},
		{"AUTH revoked token", revoked.Token, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`), wire.CodeBusiness, wire.ReasonAuthFailed, 401},
		{"AUTH token before the body's tool is run", "", call(`"checkout.create_draft_order"`, `{}`), wire.CodeBusiness, wire.ReasonAuthFailed, 401},
		{"POLICY allow-list", limited.Token, call(`"stripe.create_login_link"`, `{"stripe_account_id":"acct_1"}`), wire.CodeBusiness, wire.ReasonPolicyReject, 200},
		{"MCP-INV-07 legacy unknown tool", s.token, []byte(`{"tool":"memory_store","arguments":{}}`), wire.CodeInvalidParams, wire.ReasonUnknownTool, 200},
		{"MCP-INV-07 legacy arguments not an object", s.token, []byte(`{"tool":"knowledge.cite","arguments":"x"}`), wire.CodeInvalidParams, wire.ReasonInvalidParamType, 400},
		{"MCP-INV-07 legacy without token", "", []byte(`{"tool":"knowledge.cite","arguments":{"claim":"x"}}`), wire.CodeBusiness, wire.ReasonAuthFailed, 401},
	}
	for _, c := range cases {
		t.Run(c.invariant, func(t *testing.T) {
			r := post(t, s.url, c.token, c.body, nil)
			if r.Error == nil {
				t.Fatalf("no error (HTTP %d): %s", r.status, r.Result)
			}
			if r.Error.Code != c.code || r.Error.Data.Reason != c.reason || r.status != c.status {
				t.Fatalf("got %d %s HTTP %d, want %d %s HTTP %d (%s)", r.Error.Code, r.Error.Data.Reason, r.status,
					c.code, c.reason, c.status, r.Error.Message)
			}
			checkErrorData(t, r)
		})
	}

	t.Run("MCP-INV-05/06 a valid X-Correlation-ID is kept and returned", func(t *testing.T) {
		r := post(t, s.url, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{wire.HeaderCorrelationID: "corr-00112233aabbccdd"})
		if r.header.Get(wire.HeaderCorrelationID) != "corr-00112233aabbccdd" || r.Error.Data.CorrelationID != "corr-00112233aabbccdd" {
			t.Fatalf("header %q data %q", r.header.Get(wire.HeaderCorrelationID), r.Error.Data.CorrelationID)
		}
		r = post(t, s.url, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{wire.HeaderCorrelationID: "corr-NOT-VALID"})
		if got := r.header.Get(wire.HeaderCorrelationID); got == "corr-NOT-VALID" || !corrPattern.MatchString(got) {
			t.Fatalf("an invalid id was kept or not replaced: %q", got)
		}
	})
	t.Run("MCP-INV-06 one id from the header to the evidence (legacy body, MCP-INV-07)", func(t *testing.T) {
		r := post(t, s.url, s.token, []byte(`{"tool":"knowledge.cite","arguments":{"claim":"Stripe asks for the representative's date of birth"}}`),
			map[string]string{wire.HeaderCorrelationID: "corr-0a0b0c0d0e0f1011"})
		if r.Error != nil || r.IsError || r.CorrelationID != "corr-0a0b0c0d0e0f1011" || r.header.Get(wire.HeaderCorrelationID) != r.CorrelationID {
			t.Fatalf("legacy call: %+v", r)
		}
		var env struct {
			OK       bool `json:"ok"`
			Evidence struct {
				SnapshotID string `json:"snapshot_id"`
			} `json:"evidence"`
		}
		if err := json.Unmarshal(r.Result, &env); err != nil || !env.OK {
			t.Fatalf("legacy result %s", r.Result)
		}
		rec, err := s.Store.Get(context.Background(), env.Evidence.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.CorrelationID != "corr-0a0b0c0d0e0f1011" {
			t.Fatalf("evidence correlation %q", rec.CorrelationID)
		}
	})
	t.Run("ERR-INV-04/07 a tool's failure is a result with isError and a closed-set code", func(t *testing.T) {
		r := post(t, s.url, s.token, call(`"knowledge.cite"`, `{"claim": 5}`), nil)
		if r.Error != nil || r.status != http.StatusOK {
			t.Fatalf("a tool failure became a JSON-RPC error: HTTP %d %+v", r.status, r.Error)
		}
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				OK    bool           `json:"ok"`
				Error *toolkit.Error `json:"error"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		e := res.StructuredContent.Error
		if !res.IsError || res.StructuredContent.OK || e == nil || e.Code != toolkit.InvalidArgument || !e.Code.Valid() {
			t.Fatalf("result %s", r.Result)
		}
	})
	t.Run("MCP-INV-02 tools/list for a limited actor is its allow-list", func(t *testing.T) {
		sess := s.connect(t, limited.Token, nil)
		res, err := sess.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "pricing.get_realtime_quote" {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("ERR-INV-06 Temporal unreachable is a retryable -32001", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(10*time.Second))
		defer cancel()
		c, err := client.New(ctx, client.Options{Temporal: sdkclient.Options{HostPort: testenv.TemporalAddress()}, TaskQueue: s.TaskQueue})
		if err != nil {
			t.Fatal(err)
		}
		gw, err := gateway.New(gateway.Options{Client: c, Tokens: s.tokens, Specs: s.Deps.Registry.Specs(), Schemas: schemas.FS,
			Config: wiringtest.Config(s.TaskQueue, s.EvidenceKey), CallTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		c.Close() // the connection is gone: every start fails
		srv := serve(t, gw)
		r := post(t, srv.URL+gateway.Path, s.token, []byte(`{"tool":"knowledge.cite","arguments":{"claim":"x y z"}}`), nil)
		if r.Error == nil || r.Error.Code != wire.CodeDependency || r.Error.Data.Reason != wire.ReasonTemporalUnavailable || !r.Error.Data.Retryable {
			t.Fatalf("%+v %+v", r, r.Error)
		}
		checkErrorData(t, r)
	})
}

// checkErrorData: MCP-INV-04 (data has its fields), MCP-INV-05/ERR-INV-05
// (a well-formed correlation id, the header's), MCP-INV-08/ERR-INV-02 (the
// code's one category), ERR-INV-01 (a standard or custom code, never the
// deprecated -32000), ERR-INV-06 (retryable exactly for dependency).
func checkErrorData(t *testing.T, r rpcReply) {
	t.Helper()
	e := r.Error
	d := e.Data
	if d.Category == "" || d.Reason == "" || !corrPattern.MatchString(d.CorrelationID) {
		t.Fatalf("MCP-INV-04/05: error.data %+v", d)
	}
	if r.header.Get(wire.HeaderCorrelationID) != d.CorrelationID {
		t.Fatalf("MCP-INV-06: header %q, data %q", r.header.Get(wire.HeaderCorrelationID), d.CorrelationID)
	}
	if d.Category != wire.CategoryOf(e.Code) || wire.CodeOf(d.Reason) != e.Code {
		t.Fatalf("MCP-INV-08: code %d category %s reason %s", e.Code, d.Category, d.Reason)
	}
	if e.Code == -32000 || !((e.Code <= -32600 && e.Code >= -32700) || (e.Code <= -32000 && e.Code >= -32099)) {
		t.Fatalf("ERR-INV-01: code %d", e.Code)
	}
	if (d.Category == wire.CategoryDependency) != d.Retryable {
		t.Fatalf("ERR-INV-06: retryable %v in category %s (true exactly for dependency)", d.Retryable, d.Category)
	}
}

// rpcBody reads an HTTP answer's JSON-RPC message: the body, or, when the
// SDK answered on an SSE stream, its last data line.
func rpcBody(resp *http.Response) []byte {
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "data:") {
				raw = []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			}
		}
	}
	return raw
}
