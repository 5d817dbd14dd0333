package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/serviceerror"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// Attack tests of docs/envelope.md#idempotency: one idempotency key is one
// request, on every path.

// loginLinkCall is a stripe.create_login_link call of account acct under key.
func loginLinkCall(key, acct string) toolkit.ToolCall {
	return toolkit.ToolCall{Tool: "stripe.create_login_link", Input: []byte(`{"stripe_account_id": "` + acct + `"}`),
		Request: toolkit.Request{RequestID: "req-" + key, IdempotencyKey: key, UserID: "u_keys",
			Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}}}
}

// requireKeyConflict checks err is the CONFLICT of a key reused with other
// arguments, naming the first request's digest.
func requireKeyConflict(t *testing.T, what string, e *toolkit.Error, tool, key, firstDigest string) {
	t.Helper()
	if e == nil || e.Code != toolkit.Conflict || e.Details["reason"] != "arguments differ" || e.Details["tool"] != tool ||
		e.Details["idempotency_key"] != key {
		t.Fatalf("%s: %+v, want CONFLICT arguments differ for %s key %s", what, e, tool, key)
	}
	if d, _ := e.Details["first_request_digest"].(string); d == "" || (firstDigest != "" && d != firstDigest) {
		t.Fatalf("%s: first_request_digest %v, want %s", what, e.Details["first_request_digest"], firstDigest)
	}
}

// TestAttackKeyReuseOverToolCall: the same key for a login link of another
// Stripe account is CONFLICT, never the first account's link; the same
// request again is its first answer.
func TestAttackKeyReuseOverToolCall(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key := newKey("reuse-tc")
	first := loginLinkCall(key, "acct_1CwJaneCrafts001")
	env, _, err := s.client.CallTool(ctx, first, time.Now().Add(time.Minute))
	if err != nil || !env.OK {
		t.Fatalf("first call: %v %+v", err, env.Error)
	}
	digest, _ := toolcall.Fingerprint(first)
	env2, h, err := s.client.CallTool(ctx, loginLinkCall(key, "acct_1CwAcmeGoods0001"), time.Now().Add(time.Minute))
	requireKeyConflict(t, "other account, same key", toolkit.AsError(err), "stripe.create_login_link", key, digest)
	if env2.OK || env2.Error == nil || env2.Error.Code != toolkit.Conflict || string(env2.Data) != "" {
		t.Fatalf("the conflicting call answered %+v", env2)
	}
	if !h.Attached {
		t.Fatalf("a conflicting call started a run: %+v", h)
	}
	again, h, err := s.client.CallTool(ctx, first, time.Now().Add(time.Minute))
	if err != nil || !again.OK || !h.Attached || string(again.Data) != string(env.Data) {
		t.Fatalf("the same request again: %v %+v attached=%v", err, again.Error, h.Attached)
	}
}

// TestAttackKeyReuseAcrossToolsNamesTheFirst (docs/envelope.md#idempotency):
// a key first used for a login link and then for a relink URL is CONFLICT
// naming the tool the key was used for (details.tool) and the one asked
// for now (details.requested_tool) — over ToolCall and over MCP.
func TestAttackKeyReuseAcrossToolsNamesTheFirst(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key := newKey("reuse-cross")
	first := loginLinkCall(key, "acct_1CwJaneCrafts001")
	if env, _, err := s.client.CallTool(ctx, first, time.Now().Add(time.Minute)); err != nil || !env.OK {
		t.Fatalf("first call: %v %+v", err, env.Error)
	}
	digest, _ := toolcall.Fingerprint(first)
	second := first
	second.Tool = "stripe.create_relink_url"
	_, _, err := s.client.CallTool(ctx, second, time.Now().Add(time.Minute))
	e := toolkit.AsError(err)
	requireKeyConflict(t, "another tool, same key", e, "stripe.create_login_link", key, digest)
	if e.Details["requested_tool"] != "stripe.create_relink_url" || !strings.Contains(e.Message, "stripe.create_login_link") {
		t.Fatalf("the conflict does not name both tools: %s %+v", e.Message, e.Details)
	}

	sess := s.connect(t, s.token, nil)
	mkey := newKey("reuse-cross-mcp")
	if res, env := call(t, sess, "stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": mkey}); res.IsError || !env.OK {
		t.Fatalf("first MCP call: %+v", env.Error)
	}
	res, env := call(t, sess, "stripe.create_relink_url", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": mkey})
	if !res.IsError {
		t.Fatalf("another tool under the key over MCP answered %+v", env)
	}
	requireKeyConflict(t, "MCP another tool", env.Error, "stripe.create_login_link", mkey, "")
}

// TestAttackKeyReuseOverMCP: the same over MCP tools/call, and for draft
// orders (client and draft_order.start): the same key with another basket.
func TestAttackKeyReuseOverMCP(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key := newKey("reuse-mcp")
	res, env := call(t, sess, "stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": key})
	if res.IsError || !env.OK {
		t.Fatalf("first call: %+v", env.Error)
	}
	res, env = call(t, sess, "stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001", "idempotency_key": key})
	if !res.IsError {
		t.Fatalf("other account, same key over MCP answered %+v", env)
	}
	requireKeyConflict(t, "MCP other account", env.Error, "stripe.create_login_link", key, "")

	// Draft orders: another basket under the key of a started one.
	dkey := newKey("reuse-order")
	args := func(qty int) map[string]any {
		return map[string]any{"idempotency_key": dkey, "currency": "EUR", "wait_seconds": 30,
			"items":   []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": qty}},
			"ship_to": attackDest}
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ToolDraftStart, Arguments: args(2)}); err != nil {
		t.Fatal(err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ToolDraftStart, Arguments: args(3)})
	if err != nil {
		t.Fatal(err)
	}
	var v gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &v)
	if !res.IsError {
		t.Fatalf("another basket under the same key answered %+v", v)
	}
	requireKeyConflict(t, "MCP draft order, other basket", v.Error, "draft_order.start", dkey, "")

	in := draftorder.Input{Request: toolkit.Request{UserID: s.actor.UserID(), IdempotencyKey: dkey,
		RequestID: "req-" + dkey, Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: s.actor.ID}},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 5}}, Currency: "EUR", ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	}
	_, err = s.client.StartDraftOrder(ctx, in)
	requireKeyConflict(t, "client draft order, other basket", toolkit.AsError(err), "draft_order.start", dkey, "")
}

// TestAttackSchemaInvalidStartsNothing: an input its schema refuses is
// INVALID_ARGUMENT before anything starts (no workflow under the key), so
// the corrected call with the same key runs — over ToolCall and MCP.
func TestAttackSchemaInvalidStartsNothing(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key := newKey("schema")
	bad := toolkit.ToolCall{Tool: commerce.ToolGetQuote, Input: []byte(`{"currency": "EUR", "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 0}]}`),
		Request: toolkit.Request{RequestID: key, UserID: "u_schema", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}}}
	env, h, err := s.client.CallTool(ctx, bad, time.Now().Add(time.Minute))
	if te := toolkit.AsError(err); te == nil || te.Code != toolkit.InvalidArgument || env.OK || h.WorkflowID != "" {
		t.Fatalf("quantity 0: %v %+v %+v", err, env.Error, h)
	}
	id, _ := toolcall.ID(bad)
	var nf *serviceerror.NotFound
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, &nf) {
		t.Fatalf("workflow %s exists after a refused input (%v)", id, err)
	}
	good := bad
	good.Input = []byte(`{"currency": "EUR", "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 1}]}`)
	if env, _, err := s.client.CallTool(ctx, good, time.Now().Add(time.Minute)); err != nil || !env.OK {
		t.Fatalf("the corrected call with the same key: %v %+v", err, env.Error)
	}

	mkey := newKey("schema-mcp")
	res, env := call(t, sess, commerce.ToolGetQuote, map[string]any{"currency": "EUR", "idempotency_key": mkey,
		"items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 0}}})
	if !res.IsError || env.Error == nil || env.Error.Code != toolkit.InvalidArgument {
		t.Fatalf("quantity 0 over MCP: %+v", env)
	}
	mid := toolcall.IDPrefix + s.actor.UserID() + "/" + mkey
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, mid, ""); !errors.As(err, &nf) {
		t.Fatalf("workflow %s exists after a refused input over MCP (%v)", mid, err)
	}
	res, env = call(t, sess, commerce.ToolGetQuote, map[string]any{"currency": "EUR", "idempotency_key": mkey,
		"items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1}}})
	if res.IsError || !env.OK {
		t.Fatalf("the corrected call over MCP: %+v", env.Error)
	}
}

// TestAttackOutageDoesNotHoldTheKey: a call that failed on a Stripe outage
// (retryable) leaves its key free: once Stripe is back, the same key runs
// again and answers, over ToolCall and MCP.
func TestAttackOutageDoesNotHoldTheKey(t *testing.T) {
	sw := testenv.NewStripeSwitch(t)
	st := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) { c.StripeAPIBase = sw.URL }})
	st.Env(t)
	s := gatewayOn(t, st)
	sess := s.connect(t, s.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	sw.Down(true)
	key := newKey("outage")
	c := loginLinkCall(key, "acct_1CwJaneCrafts001")
	env, _, err := s.client.CallTool(ctx, c, time.Now().Add(time.Minute))
	if err != nil || env.OK || env.Error == nil || !env.Error.CanRetry {
		t.Fatalf("during the outage: %v %+v", err, env.Error)
	}
	mkey := newKey("outage-mcp")
	margs := map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": mkey}
	if res, env := call(t, sess, "stripe.create_login_link", margs); !res.IsError || env.Error == nil || !env.Error.CanRetry {
		t.Fatalf("during the outage over MCP: %+v", env)
	}

	sw.Down(false)
	env, h, err := s.client.CallTool(ctx, c, time.Now().Add(time.Minute))
	if err != nil || !env.OK || h.Attached {
		t.Fatalf("the same key after the outage: %v %+v attached=%v", err, env.Error, h.Attached)
	}
	if res, env := call(t, sess, "stripe.create_login_link", margs); res.IsError || !env.OK {
		t.Fatalf("the same key after the outage over MCP: %+v", env.Error)
	}
	// And now it holds: the answer is kept under the key.
	again, h, err := s.client.CallTool(ctx, c, time.Now().Add(time.Minute))
	if err != nil || !again.OK || !h.Attached || string(again.Data) != string(env.Data) {
		t.Fatalf("the key after its success: %v %+v attached=%v", err, again.Error, h.Attached)
	}
}
