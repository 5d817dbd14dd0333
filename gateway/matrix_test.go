package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The kinds of caller of docs/mcp.md#who-may-call-what.
const (
	agentTenant   = "agent with tenant"
	agentPlatform = "agent without tenant"
	backend       = "backend"
	staff         = "staff"
)

var callerKinds = []string{agentTenant, agentPlatform, backend, staff}

// outcome is what a caller gets: the tool ran (its answer, a business
// outcome included) or the caller was refused (FORBIDDEN from the tool,
// POLICY_REJECT or an unknown tool at the gateway).
type outcome string

const (
	allowed outcome = "allowed"
	refused outcome = "refused"
	// none: the caller has no such tool (draft orders are started by
	// backends and staff through the client's API, not ToolCall; an
	// internal tool is not listed to any agent, docs/quote-seals.md#internal-tools).
	none outcome = "no such tool"
)

// matrixRow is one tool with one set of arguments, and what each kind of
// caller must get. own/foreign name whose merchant the arguments are.
type matrixRow struct {
	tool   string
	label  string
	args   func() map[string]any
	expect map[string]outcome
}

func all(o outcome) map[string]outcome {
	return map[string]outcome{agentTenant: o, agentPlatform: o, backend: o, staff: o}
}

func except(base outcome, over map[string]outcome) map[string]outcome {
	m := all(base)
	for k, v := range over {
		m[k] = v
	}
	return m
}

// TestMatrixEveryToolEveryCaller (docs/mcp.md#who-may-call-what): every
// tool the gateway serves, called by each kind of caller — an agent whose
// token names tenant tenant_acme, an agent without a tenant, a backend
// (system actor through the tool call workflow) and a support-staff member
// (user actor through ToolCall) — is allowed or refused exactly as the
// table says. Merchant and Stripe tools are called with the tenant's own
// merchant and with another tenant's.
func TestMatrixEveryToolEveryCaller(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	tenantTok := s.newToken(t, gateway.Actor{ID: "matrix-tenant", Tenant: "tenant_acme", CallsPerMinute: 10000, BytesPerMinute: 1 << 26})
	sessions := map[string]*mcp.ClientSession{
		agentTenant:   s.connect(t, tenantTok.Token, nil),
		agentPlatform: s.connect(t, s.token, nil),
	}
	// A priced basket, for the tools that take one.
	items := []map[string]any{{"sku": "TEE-ORG-M-WHT", "quantity": 1}}
	dest := map[string]any{"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}
	var (
		quote  commerce.Quote
		ship   commerce.ShippingQuote
		duties commerce.DutiesAndTaxes
	)
	_, env := call(t, sessions[agentPlatform], "pricing.get_realtime_quote", map[string]any{"currency": "EUR", "items": items})
	mustDecode(t, env, &quote)
	_, env = call(t, sessions[agentPlatform], "shipping.quote_options", map[string]any{"currency": "EUR", "items": items, "destination": dest})
	mustDecode(t, env, &ship)
	_, env = call(t, sessions[agentPlatform], "tax.estimate_duties_and_taxes", map[string]any{"lines": quote.Lines, "shipping": ship.Options[0],
		"destination": dest, "currency": "EUR", "incoterm": "DDP"})
	mustDecode(t, env, &duties)

	fixed := func(m map[string]any) func() map[string]any { return func() map[string]any { return m } }
	keyed := func(m map[string]any) func() map[string]any {
		return func() map[string]any {
			out := map[string]any{"idempotency_key": newKey("matrix")}
			for k, v := range m {
				out[k] = v
			}
			return out
		}
	}
	ownAcct, foreignAcct := "acct_1CwAcmeGoods0001", "acct_1CwBlueHarbor001"
	onlyTenantRefused := except(allowed, map[string]outcome{agentTenant: refused})
	agentsOnly := map[string]outcome{agentTenant: allowed, agentPlatform: allowed, backend: none, staff: none}
	// Steps of the DraftOrder workflow (docs/quote-seals.md#internal-tools):
	// no agent sees them, a ToolCall of one is FORBIDDEN (internal_tool)
	// before anything starts, whoever asks. The workflow calls them.
	internal := map[string]outcome{agentTenant: none, agentPlatform: none, backend: refused, staff: refused}
	rows := []matrixRow{
		{"pricing.get_realtime_quote", "", fixed(map[string]any{"currency": "EUR", "items": items}), all(allowed)},
		{"shipping.quote_options", "", fixed(map[string]any{"currency": "EUR", "items": items, "destination": dest}), all(allowed)},
		{"compliance.check_item", "", fixed(map[string]any{"items": items, "destination": dest}), all(allowed)},
		{"tax.estimate_duties_and_taxes", "", fixed(map[string]any{"lines": quote.Lines, "shipping": ship.Options[0], "destination": dest,
			"currency": "EUR", "incoterm": "DDP"}), all(allowed)},
		{"checkout.compute_total", "", fixed(map[string]any{"quote": quote, "shipping": ship.Options[0], "duties": duties,
			"shipping_expires_at": ship.ExpiresAt}), internal},
		{"checkout.create_draft_order", "", keyed(map[string]any{"total": map[string]any{}, "confirmed_quote_hash": "sha256:" + strings.Repeat("0", 64),
			"ship_to": dest}), internal},
		{"knowledge.cite", "", fixed(map[string]any{"claim": "Stripe needs the representative's date of birth"}), all(allowed)},
		// A payment's status is a read for every caller; an unknown draft is
		// the tool's own NOT_FOUND (docs/mcp.md#who-may-call-what).
		{"checkout.get_payment", "", fixed(map[string]any{"draft_order_id": "do_" + strings.Repeat("0", 26)}), all(allowed)},
		{"merchant.get_row", "own merchant", fixed(map[string]any{"merchant_id": "m_acme_goods"}), all(allowed)},
		{"merchant.get_row", "another tenant's merchant", fixed(map[string]any{"merchant_id": "m_blue_harbor"}), onlyTenantRefused},
		{"merchant.get_row", "the platform's merchant", fixed(map[string]any{"merchant_id": "m_jane_crafts"}), onlyTenantRefused},
		{"stripe.get_account_status", "own account", fixed(map[string]any{"stripe_account_id": ownAcct}), all(allowed)},
		{"stripe.get_account_status", "another tenant's account", fixed(map[string]any{"stripe_account_id": foreignAcct}), onlyTenantRefused},
		{"stripe.create_relink_url", "own account", keyed(map[string]any{"stripe_account_id": ownAcct}), all(allowed)},
		{"stripe.create_relink_url", "another tenant's account", keyed(map[string]any{"stripe_account_id": foreignAcct}), onlyTenantRefused},
		{"stripe.create_login_link", "own account", keyed(map[string]any{"stripe_account_id": ownAcct}), all(allowed)},
		{"stripe.create_login_link", "another tenant's account", keyed(map[string]any{"stripe_account_id": foreignAcct}), onlyTenantRefused},
		// Approvals stay with people: staff decide through the flow that
		// waits for them, which records the decision itself; no agent
		// does, and no ToolCall run (docs/quote-seals.md#who-may-call-a-step).
		{"support.record_approval", "", keyed(map[string]any{"flow": "draft_order", "subject": "compliance review",
			"approval_id": "apr_0123456789abcdef", "decision": "approve", "approver": "alice.support"}),
			all(refused)},
		{gateway.ToolDraftStatus, "", keyed(nil), agentsOnly},
		{gateway.ToolDraftConfirm, "", keyed(map[string]any{"quote_hash": "0123456789abcdef"}), agentsOnly},
		{gateway.ToolDraftCancel, "", keyed(nil), agentsOnly},
		{gateway.ToolDraftStart, "", keyed(map[string]any{"items": items, "ship_to": dest, "currency": "EUR", "dry_run": true, "wait_seconds": 30}), agentsOnly},
	}
	// Every tool the gateway serves has a row.
	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.tool] = true
	}
	for _, name := range s.gw.ToolNames() {
		if !covered[name] {
			t.Fatalf("%s has no row in the matrix", name)
		}
	}
	var table []string
	for _, r := range rows {
		for _, kind := range callerKinds {
			name := r.tool
			if r.label != "" {
				name += " (" + r.label + ")"
			}
			got, why := s.callAs(t, ctx, kind, sessions[kind], r.tool, r.args())
			want := r.expect[kind]
			table = append(table, fmt.Sprintf("%-60s %-22s %-13s %s", name, kind, got, why))
			if got != want {
				t.Errorf("%s as %s: %s (%s), want %s", name, kind, got, why, want)
			}
		}
	}
	sort.Strings(table)
	t.Logf("tool × caller:\n%s", strings.Join(table, "\n"))
}

// callAs calls tool with args as a caller of kind and says what it got.
func (s *stack) callAs(t *testing.T, ctx context.Context, kind string, sess *mcp.ClientSession, tool string, args map[string]any) (outcome, string) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if sess != nil {
		res, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			if strings.Contains(err.Error(), "POLICY_REJECT") || strings.Contains(err.Error(), "-32002") {
				return refused, err.Error()
			}
			if strings.Contains(err.Error(), "unknown tool") {
				return none, err.Error()
			}
			t.Fatalf("%s as %s: %v", tool, kind, err)
		}
		var env struct {
			Error *toolkit.Error `json:"error"`
		}
		remarshal(t, res.StructuredContent, &env)
		return judge(env.Error)
	}
	actor := toolkit.Actor{Type: toolkit.ActorSystem, ID: "order-service"}
	user := "u_backend"
	if kind == staff {
		actor, user = toolkit.Actor{Type: toolkit.ActorUser, ID: "alice.support"}, "alice-support"
	}
	req := toolkit.Request{RequestID: newKey("req"), Actor: actor, UserID: user}
	if k, ok := args["idempotency_key"].(string); ok {
		req.IdempotencyKey = k
		delete(args, "idempotency_key")
	}
	raw, _ := json.Marshal(args)
	env, _, err := s.client.CallTool(cctx, toolkit.ToolCall{Tool: tool, Request: req, Input: raw}, time.Now().Add(80*time.Second))
	if err != nil && env.Error == nil {
		// Refused before anything started (an internal tool): the
		// refusal is the error itself.
		if te := toolkit.AsError(err); te != nil && te.Code == toolkit.Forbidden {
			return refused, fmt.Sprintf("%s %v", te.Code, te.Details["reason"])
		}
		t.Fatalf("%s as %s: %v", tool, kind, err)
	}
	if env.Error != nil && env.Error.Code == toolkit.NotFound && strings.Contains(env.Error.Message, "has no spec") {
		return none, env.Error.Message
	}
	return judge(env.Error)
}

// judge: FORBIDDEN is a refusal; any other answer (ok, or a business
// outcome such as NOT_FOUND for an unknown order) means the tool ran.
func judge(e *toolkit.Error) (outcome, string) {
	if e == nil {
		return allowed, "ok"
	}
	if e.Code == toolkit.Forbidden {
		return refused, string(e.Code)
	}
	return allowed, string(e.Code)
}
