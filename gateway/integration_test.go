package gateway_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

// TestMCPListToolsIsTheRegistry (MCP-INV-02): tools/list over streamable
// HTTP is every registered ToolSpec, with its schemas and annotations,
// plus the draft order tools.
func TestMCPListToolsIsTheRegistry(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	specs := s.Deps.Registry.Specs()
	want := []string{gateway.ToolDraftCancel, gateway.ToolDraftConfirm, gateway.ToolDraftStart, gateway.ToolDraftStatus}
	for _, spec := range specs {
		if spec.Internal {
			// Never listed (docs/quote-seals.md#internal-tools).
			if got[spec.Name] != nil {
				t.Fatalf("internal tool %s is listed", spec.Name)
			}
			continue
		}
		want = append(want, spec.Name)
		tl := got[spec.Name]
		if tl == nil {
			t.Fatalf("%s missing from tools/list", spec.Name)
		}
		a := tl.Annotations
		if tl.Description != spec.Description || tl.Title == "" || a == nil || a.ReadOnlyHint != spec.Annotations.ReadOnly ||
			a.IdempotentHint != spec.Annotations.Idempotent || a.DestructiveHint == nil || *a.DestructiveHint != spec.Annotations.Destructive ||
			a.OpenWorldHint == nil || *a.OpenWorldHint != spec.Annotations.OpenWorld {
			t.Fatalf("%s listed as %+v / %+v", spec.Name, tl, a)
		}
		in, _ := tl.InputSchema.(map[string]any)
		props, _ := in["properties"].(map[string]any)
		if props["idempotency_key"] == nil || in["$id"] == nil {
			t.Fatalf("%s input schema %v", spec.Name, in)
		}
		required := strings.Trim(strings.Join(toStrings(in["required"]), ","), ",")
		if !spec.Annotations.ReadOnly && !strings.Contains(required, "idempotency_key") {
			t.Fatalf("write tool %s does not require idempotency_key: %v", spec.Name, required)
		}
		out, _ := tl.OutputSchema.(map[string]any)
		if op, _ := out["properties"].(map[string]any); op["data"] == nil || op["ok"] == nil {
			t.Fatalf("%s output schema %v", spec.Name, out)
		}
	}
	sort.Strings(want)
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("tools/list %v\nwant %v", names, want)
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestMCPCallsEveryTool: an agent calls every registered tool over MCP
// but the internal ones (TestAttackInternalToolsOverMCP), chaining answers
// the way it would (quote → shipping → duties). Each answer is the tool's
// envelope — a write's from a tool call run, a read's answered by the
// gateway itself (docs/mcp.md#direct-reads) — and each successful one
// names an evidence snapshot holding the gateway's correlation id
// (MCP-INV-06).
func TestMCPCallsEveryTool(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	ctx := context.Background()
	items := []map[string]any{{"sku": "TEE-ORG-M-WHT", "quantity": 2}}
	dest := map[string]any{"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}
	called := map[string]bool{}
	ok := func(tool string, args map[string]any) toolkit.Response {
		t.Helper()
		res, env := call(t, sess, tool, args)
		called[tool] = true
		if res.IsError || !env.OK || env.Tool != tool {
			t.Fatalf("%s: isError %v envelope %+v (error %+v)", tool, res.IsError, env, env.Error)
		}
		rec, err := s.Store.Get(ctx, env.SnapshotID())
		if err != nil {
			t.Fatalf("%s: evidence %s: %v", tool, env.SnapshotID(), err)
		}
		if corr := corrOf(res); !toolkit.ValidCorrelationID(corr) || rec.CorrelationID != corr {
			t.Fatalf("%s: evidence correlation %q, gateway's %q", tool, rec.CorrelationID, corr)
		}
		spec, _ := s.Deps.Registry.Spec(tool)
		switch {
		case spec.Annotations.ReadOnly && (rec.WorkflowID != "" || rec.ActivityType != evidence.DirectActivityType ||
			rec.ChainKey != evidence.DirectChainKey(evidence.HashUserID(s.actor.UserID()), rec.RequestID)):
			t.Fatalf("read %s ran in %q (%s, chain %s), not answered directly", tool, rec.WorkflowID, rec.ActivityType, rec.ChainKey)
		case !spec.Annotations.ReadOnly && !strings.HasPrefix(rec.WorkflowID, toolcall.IDPrefix):
			t.Fatalf("%s ran in %s, not a tool call run", tool, rec.WorkflowID)
		}
		return env
	}
	var quote commerce.Quote
	env := ok("pricing.get_realtime_quote", map[string]any{"currency": "EUR", "items": items})
	mustDecode(t, env, &quote)
	var ship commerce.ShippingQuote
	env = ok("shipping.quote_options", map[string]any{"currency": "EUR", "items": items, "destination": dest})
	mustDecode(t, env, &ship)
	ok("compliance.check_item", map[string]any{"items": items, "destination": dest})
	var duties commerce.DutiesAndTaxes
	env = ok("tax.estimate_duties_and_taxes", map[string]any{"lines": quote.Lines, "shipping": ship.Options[0],
		"destination": dest, "currency": "EUR", "incoterm": "DDP"})
	mustDecode(t, env, &duties)
	ok("merchant.get_row", map[string]any{"merchant_id": "m_acme_goods"})
	ok("stripe.get_account_status", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"})
	ok("stripe.create_relink_url", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001", "idempotency_key": newKey("mcp-relink")})
	ok("stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": newKey("mcp-login")})
	ok("knowledge.cite", map[string]any{"claim": "Stripe needs the business representative's date of birth"})
	// A payment's status: an unknown draft is the tool's own answer, not a refusal at the door.
	if _, env := call(t, sess, "checkout.get_payment", map[string]any{"draft_order_id": "do_" + strings.Repeat("0", 26)}); env.Error != nil &&
		env.Error.Code != toolkit.NotFound {
		t.Fatalf("checkout.get_payment of an unknown draft: %+v", env.Error)
	}
	called["checkout.get_payment"] = true

	// Approvals stay with staff: the agent reaches the tool, and the
	// invoker's preflight refuses the agent actor — a tool result, isError.
	res, env := call(t, sess, "support.record_approval", map[string]any{"flow": "draft_order", "subject": "compliance review",
		"approval_id": "apr_0123456789abcdef", "decision": "approve", "approver": "alice.support", "idempotency_key": newKey("mcp-apr")})
	called["support.record_approval"] = true
	if !res.IsError || env.OK || env.Error == nil || env.Error.Code != toolkit.Forbidden {
		t.Fatalf("an agent's approval: isError %v envelope %+v", res.IsError, env.Error)
	}
	for _, spec := range s.Deps.Registry.Specs() {
		if !called[spec.Name] && !spec.Internal {
			t.Fatalf("%s was not called", spec.Name)
		}
	}
}

func mustDecode(t *testing.T, env toolkit.Response, v any) {
	t.Helper()
	if err := env.Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestMCPBusinessOutcomeIsAToolResult: arguments that fail the tool's
// schema, a write without idempotency_key and an unknown SKU are results
// with isError and the envelope, so the model can correct itself.
func TestMCPBusinessOutcomeIsAToolResult(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	cases := []struct {
		tool string
		args map[string]any
		code toolkit.Code
	}{
		{"pricing.get_realtime_quote", map[string]any{"currency": "EUR", "items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": "two"}}}, toolkit.InvalidArgument},
		{"stripe.create_relink_url", map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001"}, toolkit.InvalidArgument},
		{"pricing.get_realtime_quote", map[string]any{"currency": "EUR", "items": []any{map[string]any{"sku": "NO-SUCH-SKU-1", "quantity": 1}}}, ""},
		// Nothing a caller sends sets the actor or the user: such
		// arguments are not the tool's and fail its schema.
		{"knowledge.cite", map[string]any{"claim": "payouts", "user_id": "u_someone_else", "actor": map[string]any{"type": "user", "id": "root"}}, toolkit.InvalidArgument},
	}
	for _, c := range cases {
		res, env := call(t, sess, c.tool, c.args)
		if !res.IsError || env.OK || env.Error == nil || !env.Error.Code.Valid() || (c.code != "" && env.Error.Code != c.code) {
			t.Fatalf("%s %v: isError %v envelope %+v", c.tool, c.args, res.IsError, env.Error)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, string(env.Error.Code)) {
			t.Fatalf("text content %q does not name the code", text)
		}
	}
}

// TestMCPSameCallTwiceIsOneRun: a retried call (same idempotency_key)
// attaches to the same tool call run and returns the same answer.
func TestMCPSameCallTwiceIsOneRun(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	key := newKey("mcp-twice")
	args := map[string]any{"stripe_account_id": "acct_1CwAcmeGoods0001", "idempotency_key": key}
	_, first := call(t, sess, "stripe.create_relink_url", args)
	_, second := call(t, s.connect(t, s.token, nil), "stripe.create_relink_url", args)
	if !first.OK || first.SnapshotID() == "" || first.SnapshotID() != second.SnapshotID() {
		t.Fatalf("two answers: %s and %s", first.SnapshotID(), second.SnapshotID())
	}
	id := toolcall.IDPrefix + s.actor.UserID() + "/" + key
	ctx := context.Background()
	runs := 0
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := s.Store.SnapshotsForWorkflow(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range snaps {
		if sn.RunID == desc.WorkflowExecutionInfo.Execution.RunId {
			runs++
		}
	}
	if len(snaps) != 1 || runs != 1 {
		t.Fatalf("%d snapshots (%d of the run) for one call", len(snaps), runs)
	}
	// The same key for another tool is not that tool's answer.
	res, env := call(t, sess, "stripe.create_login_link", map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": key})
	if !res.IsError || env.Error == nil || env.Error.Code != toolkit.Conflict {
		t.Fatalf("key reused for another tool: %+v", env.Error)
	}
}

// TestMCPDraftOrderByAgent: a draft order started, confirmed and created by
// MCP calls alone; progress arrives while the agent waits; the audit of the
// run is CLEAN and its evidence is the run's.
func TestMCPDraftOrderByAgent(t *testing.T) {
	s := newStack(t)
	var progress int
	sess := s.connect(t, s.token, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress++ },
	})
	key := newKey("mcp-order")
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	start := &mcp.CallToolParams{Name: gateway.ToolDraftStart, Arguments: map[string]any{
		"idempotency_key": key, "currency": "EUR",
		"items":        []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 2}},
		"ship_to":      map[string]any{"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"},
		"wait_seconds": 30,
	}}
	start.SetProgressToken("start-" + key)
	res, err := sess.CallTool(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	startRes := res
	var v gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &v)
	if !res.IsError || v.Error == nil || v.Error.Code != toolkit.NeedsUserConfirmation || v.Confirmation == nil ||
		v.Confirmation.Send.Tool != gateway.ToolDraftConfirm || v.Confirmation.ShowUser.GrandTotal.Amount <= 0 {
		t.Fatalf("start: %+v", v)
	}
	if progress == 0 {
		t.Fatal("no progress notification while the draft order was priced")
	}
	// Status reads the same; a second start with the key is the same order.
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ToolDraftStatus, Arguments: map[string]any{"idempotency_key": key}})
	if err != nil {
		t.Fatal(err)
	}
	var st gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &st)
	if st.State != draftorder.StateNeedsConfirm || st.Confirmation == nil || st.Confirmation.Send.Arguments["quote_hash"] != v.Confirmation.Send.Arguments["quote_hash"] {
		t.Fatalf("status: %+v", st)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ToolDraftConfirm, Arguments: v.Confirmation.Send.Arguments})
	if err != nil {
		t.Fatal(err)
	}
	var done gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &done)
	if res.IsError || done.State != draftorder.StateDraftCreated || done.DraftOrder == nil {
		t.Fatalf("confirm: %+v", done)
	}
	id := done.WorkflowID
	rep, err := audit.Audit(ctx, audit.Deps{Temporal: s.Temporal, Evidence: s.Store, Specs: wiring.ToolSpecs(), DataConverter: clienttest.DataConverter()}, audit.ByID(id, ""))
	if err != nil || !rep.Clean {
		t.Fatalf("audit of %s: clean %v err %v findings %+v", id, rep.Clean, err, rep.Findings)
	}
	// The start call's correlation id names the run's request: every
	// evidence row of the run (each step with a correlation id of its own,
	// for the two-phase audit) is found by it.
	startCorr := corrOf(startRes)
	snaps, err := s.Store.SnapshotsForWorkflow(ctx, id)
	if err != nil || len(snaps) < 5 || !toolkit.ValidCorrelationID(startCorr) {
		t.Fatalf("evidence of %s: %d %v (start %q)", id, len(snaps), err, startCorr)
	}
	tools := map[string]bool{}
	for _, sn := range snaps {
		tools[sn.Tool] = true
		if sn.RequestID != startCorr || !toolkit.ValidCorrelationID(sn.CorrelationID) {
			t.Fatalf("snapshot %s of %s: request %q correlation %q, start's correlation %q", sn.SnapshotID, sn.Tool, sn.RequestID, sn.CorrelationID, startCorr)
		}
	}
	if !tools["checkout.create_draft_order"] {
		t.Fatalf("no evidence of the draft order's creation: %v", tools)
	}
}
