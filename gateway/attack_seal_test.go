package gateway_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// Attack tests of docs/quote-seals.md: an agent (or anything holding a
// Temporal client) tries to make a draft order around the workflow.

var (
	attackItems = []map[string]any{{"sku": "TEE-ORG-M-WHT", "quantity": 2}}
	attackDest  = map[string]any{"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin",
		"postal_code": "10115", "country": "DE"}
)

// TestAttackInternalToolsOverMCP: the sequence pricing → shipping → tax →
// total → create, one call at a time over MCP, stops at the total: the
// internal tools are neither listed nor callable, for a token allowed
// every tool.
func TestAttackInternalToolsOverMCP(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	list, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	readsPayments := false
	for _, tl := range list.Tools {
		switch tl.Name {
		case commerce.ToolComputeTotal, commerce.ToolCreateDraftOrder,
			commerce.ToolSettleStock, commerce.ToolCreatePayment, commerce.ToolCancelPayment, commerce.ToolRefundPayment,
			commerce.ToolRestockReturned:
			t.Fatalf("internal tool %s is listed", tl.Name)
		case commerce.ToolGetPayment:
			readsPayments = true // an agent may read a payment, never charge (docs/payments.md#webhooks)
		}
	}
	if !readsPayments {
		t.Fatalf("%s is not listed", commerce.ToolGetPayment)
	}
	var quote commerce.Quote
	_, env := call(t, sess, commerce.ToolGetQuote, map[string]any{"currency": "EUR", "items": attackItems})
	mustDecode(t, env, &quote)
	var ship commerce.ShippingQuote
	_, env = call(t, sess, commerce.ToolQuoteShipping, map[string]any{"currency": "EUR", "items": attackItems, "destination": attackDest})
	mustDecode(t, env, &ship)
	var duties commerce.DutiesAndTaxes
	_, env = call(t, sess, commerce.ToolDutiesAndTaxes, map[string]any{"lines": quote.Lines, "shipping": ship.Options[0],
		"destination": attackDest, "currency": "EUR", "incoterm": "DDP"})
	mustDecode(t, env, &duties)

	for tool, args := range map[string]map[string]any{
		commerce.ToolComputeTotal: {"quote": quote, "shipping": ship.Options[0], "duties": duties, "shipping_expires_at": ship.ExpiresAt},
		commerce.ToolCreateDraftOrder: {"total": map[string]any{}, "confirmed_quote_hash": "sha256:" + strings.Repeat("0", 64),
			"ship_to": attackDest, "idempotency_key": newKey("attack-create")},
		commerce.ToolCreatePayment: {"draft_order_id": "do_01JD0000000000000000000000", "merchant_id": "m_jane_crafts"},
		commerce.ToolCancelPayment: {"draft_order_id": "do_01JD0000000000000000000000"},
		commerce.ToolSettleStock:   {"draft_order_id": "do_01JD0000000000000000000000", "action": "release", "reason": "cancelled"},
		commerce.ToolRefundPayment: {"draft_order_id": "do_01JD0000000000000000000000"},
		commerce.ToolRestockReturned: {"draft_order_id": "do_01JD0000000000000000000000",
			"lines": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1}}},
	} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), "unknown tool") {
				t.Fatalf("%s over MCP: %v, want the unknown-tool error", tool, err)
			}
		case !res.IsError:
			t.Fatalf("%s over MCP answered %+v", tool, res.StructuredContent)
		}
	}
	s.mustHaveNoDrafts(t)
}

// TestAttackInternalToolsOverToolCall: the same steps through the ToolCall
// workflow are refused before anything starts (client.CallTool, which
// `starter tool call` and the gateway use), and a ToolCall started with a
// bare SDK — no client checks at all — is refused by the tool activity.
func TestAttackInternalToolsOverToolCall(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tool := range []string{commerce.ToolComputeTotal, commerce.ToolCreateDraftOrder,
		commerce.ToolSettleStock, commerce.ToolCreatePayment, commerce.ToolCancelPayment, commerce.ToolRefundPayment,
		commerce.ToolRestockReturned} {
		key := newKey("attack-internal")
		tc := toolkit.ToolCall{Tool: tool, Input: []byte(`{}`), Request: toolkit.Request{RequestID: key, IdempotencyKey: key,
			Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "attacker"}, UserID: "u_attacker"}}
		env, h, err := s.client.CallTool(ctx, tc, time.Now().Add(time.Minute))
		if te := toolkit.AsError(err); te == nil || te.Code != toolkit.Forbidden || te.Details["reason"] != "internal_tool" || env.OK {
			t.Fatalf("%s via client.CallTool: %v (%+v)", tool, err, env)
		}
		if h.WorkflowID != "" {
			t.Fatalf("%s: a refused call started %s", tool, h.WorkflowID)
		}
		id, _ := toolcall.ID(tc)
		var nf *serviceerror.NotFound
		if _, err := s.Temporal.DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, &nf) {
			t.Fatalf("%s: workflow %s exists after a refused call (%v)", tool, id, err)
		}

		// A bare start of the tool-call workflow: it runs, its
		// activity refuses.
		for _, wt := range []string{toolcall.WorkflowName} {
			run, err := s.Temporal.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id + "/" + wt, TaskQueue: s.TaskQueue},
				wt, toolcall.Input{Call: tc})
			if err != nil {
				t.Fatal(err)
			}
			var res toolcall.Result
			if err := run.Get(ctx, &res); err != nil {
				t.Fatalf("%s bare start of %s: %v", tool, wt, err)
			}
			if e := res.Envelope.Error; res.Envelope.OK || e == nil || e.Code != toolkit.Forbidden || e.Details["reason"] != "internal_tool" {
				t.Fatalf("%s bare start of %s answered %+v (error %+v)", tool, wt, res.Envelope, e)
			}
		}
	}
	s.mustHaveNoDrafts(t)
}

// mustHaveNoDrafts: no attack wrote a draft order.
func (s *stack) mustHaveNoDrafts(t *testing.T) {
	t.Helper()
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM draft_orders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("draft_orders holds %d rows (%v)", n, err)
	}
}

// sealRig calls the tools through the worker's own invoker as if from
// inside workflow wf: a stand-in for a compromised or hand-made workflow,
// so each check of the write is tried on its own.
type sealRig struct {
	t   *testing.T
	s   *stack
	wf  string
	seq int
}

func (r *sealRig) invoke(tool string, input any, key string) toolkit.Response {
	r.t.Helper()
	r.seq++
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	ctx := toolkit.WithCall(context.Background(), toolkit.CallContext{WorkflowID: r.wf, RunID: "run-1",
		ActivityID: "a" + hex.EncodeToString(b), ActivityType: "CallTool", Attempt: 1})
	req := toolkit.Request{RequestID: "req-" + hex.EncodeToString(b), Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "workflow"},
		UserID: "u_attacker", IdempotencyKey: key, CorrelationID: "corr-" + hex.EncodeToString(b)}
	env, err := r.s.Deps.Invoker.Invoke(ctx, tool, req, input)
	if err != nil {
		return toolkit.ErrorResponse(tool, "", err)
	}
	return *env
}

func (r *sealRig) ok(tool string, input any, out any) string {
	r.t.Helper()
	env := r.invoke(tool, input, "")
	if !env.OK {
		r.t.Fatalf("%s: %+v", tool, env.Error)
	}
	mustDecode(r.t, env, out)
	return env.SnapshotID()
}

// create asks the write for total and returns its refusal's reason.
func (r *sealRig) create(total commerce.Total) (toolkit.Response, string) {
	r.t.Helper()
	env := r.invoke(commerce.ToolCreateDraftOrder, commerce.CreateDraftOrderArgs{Total: total, ConfirmedQuoteHash: total.QuoteHash,
		ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
		newKey("seal-create"))
	reason := ""
	if env.Error != nil {
		reason, _ = env.Error.Details["reason"].(string)
	}
	return env, reason
}

// cheapenTotal lowers every unit price to one cent and recomputes what
// an attacker can: line totals, subtotal, grand total and quote_hash.
func cheapenTotal(t *testing.T, tot commerce.Total) commerce.Total {
	tot.Lines = append([]commerce.TotalLine(nil), tot.Lines...)
	var sub int64
	for i := range tot.Lines {
		tot.Lines[i].UnitPrice.Amount = 1
		tot.Lines[i].LineTotal.Amount = int64(tot.Lines[i].Quantity)
		sub += tot.Lines[i].LineTotal.Amount
	}
	cut := tot.Subtotal.Amount - sub
	tot.Subtotal.Amount = sub
	tot.GrandTotal.Amount -= cut
	h, err := commerce.QuoteHash(tot)
	if err != nil {
		t.Fatal(err)
	}
	tot.QuoteHash = h
	return tot
}

// evidence makes what a draft order's quote makes for items to dest, as
// workflow r.wf: the origin choice, pricing where it ships from and
// compliance for its transport mode; the refs checkout.compute_total takes.
func (r *sealRig) evidence(items []commerce.LineItem, dest commerce.Address, currency string) (commerce.EvidenceRefs, commerce.OriginPlan) {
	r.t.Helper()
	var plan commerce.OriginPlan
	origins := r.ok(commerce.ToolChooseOrigins, commerce.Order{Items: items, ShipTo: dest, Currency: currency,
		ShippingService: commerce.ServiceStandard, Incoterm: commerce.IncotermDDP}.OriginsArgs(), &plan)
	var q commerce.Quote
	pricing := r.ok(commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: items, Currency: currency, ShipFrom: plan.Parcels[0].ShipFrom}, &q)
	var v commerce.ComplianceVerdict
	compliance := r.ok(commerce.ToolCheckCompliance, commerce.CheckComplianceArgs{Items: items, Destination: dest,
		TransportMode: commerce.StrictestMode(plan)}, &v)
	return commerce.EvidenceRefs{OriginsSnapshotID: origins, PricingSnapshotID: pricing, ComplianceSnapshotID: compliance}, plan
}

// total asks checkout.compute_total for the total refs name; the reason
// of a refusal, or the total.
func (r *sealRig) total(refs commerce.EvidenceRefs) (commerce.Total, toolkit.Response, string) {
	r.t.Helper()
	env := r.invoke(commerce.ToolComputeTotal, commerce.ComputeTotalArgs{EvidenceRefs: refs}, "")
	var tot commerce.Total
	if env.OK {
		mustDecode(r.t, env, &tot)
		return tot, env, ""
	}
	reason, _ := env.Error.Details["reason"].(string)
	return tot, env, reason
}

// refusedAt is one attack: a total the write is handed (write), or
// evidence compute_total is asked to total (refs), with the refusal it
// must meet.
type refusedAt struct {
	name   string
	rig    *sealRig
	write  func() commerce.Total
	refs   func() commerce.EvidenceRefs
	code   toolkit.Code
	reason string
}

func (a refusedAt) check(t *testing.T) {
	t.Helper()
	var env toolkit.Response
	var reason string
	if a.refs != nil {
		_, env, reason = a.rig.total(a.refs())
	} else {
		env, reason = a.rig.create(a.write())
	}
	if env.OK || env.Error == nil || env.Error.Code != a.code || reason != a.reason {
		t.Errorf("%s: ok=%v error %+v, want %s %s", a.name, env.OK, env.Error, a.code, a.reason)
	}
}

// TestAttackForgedTotalRefusedByTheWrite: every way to get a total this
// service did not derive from the workflow's own evidence is refused with
// a reason naming what is wrong — at compute_total, which takes snapshot
// ids and nothing else, or at the write, which derives the total again;
// the genuine sealed total is taken.
func TestAttackForgedTotalRefusedByTheWrite(t *testing.T) {
	s := newStack(t)
	r := &sealRig{t: t, s: s, wf: "draft-order/u_attacker/" + newKey("seal")}
	dest := commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}
	tees := []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}
	refs, _ := r.evidence(tees, dest, "EUR")
	genuine, env, reason := r.total(refs)
	if !env.OK || genuine.Evidence == nil || !strings.HasPrefix(genuine.Evidence.Seal, "qs1.") {
		t.Fatalf("compute_total did not seal: %+v (%s)", env.Error, reason)
	}
	// A decoy: one tee priced in the same workflow.
	var decoy commerce.Quote
	onePricing := r.ok(commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}},
		Currency: "EUR", ShipFrom: "DE"}, &decoy)

	foreign := &sealRig{t: t, s: s, wf: "draft-order/u_attacker/" + newKey("other")}
	resealed := cheapenTotal(t, genuine)
	ev := *genuine.Evidence // the attacker's copy, not the genuine total's
	resealed.Evidence = &ev
	attacker, err := commerce.NewSealRing(strings.Split(genuine.Evidence.Seal, ".")[1], map[string][]byte{
		strings.Split(genuine.Evidence.Seal, ".")[1]: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	if resealed.Evidence.Seal, err = attacker.Seal(r.wf, resealed, *resealed.Evidence); err != nil {
		t.Fatal(err)
	}
	with := func(edit func(*commerce.EvidenceRefs)) func() commerce.EvidenceRefs {
		return func() commerce.EvidenceRefs {
			e := refs
			edit(&e)
			return e
		}
	}
	for _, a := range []refusedAt{
		{name: "unsealed 1-cent total", rig: r, write: func() commerce.Total {
			tot := cheapenTotal(t, genuine)
			tot.Evidence = nil
			return tot
		}, code: toolkit.Forbidden, reason: "quote_not_sealed"},
		{name: "genuine seal on a cheapened total", rig: r, write: func() commerce.Total { return cheapenTotal(t, genuine) },
			code: toolkit.Forbidden, reason: "seal_invalid"},
		{name: "cheapened total resealed with a guessed key", rig: r, write: func() commerce.Total { return resealed },
			code: toolkit.Forbidden, reason: "seal_invalid"},
		{name: "a genuine total replayed in another workflow", rig: foreign, write: func() commerce.Total { return genuine },
			code: toolkit.Forbidden, reason: "seal_invalid"},
		{name: "pricing of a decoy basket", rig: r, refs: with(func(e *commerce.EvidenceRefs) { e.PricingSnapshotID = onePricing }),
			code: toolkit.Forbidden, reason: "price_not_quoted"},
		{name: "no compliance evidence", rig: r, refs: with(func(e *commerce.EvidenceRefs) { e.ComplianceSnapshotID = "" }),
			code: toolkit.InvalidArgument, reason: ""},
		{name: "compliance evidence that is pricing's", rig: r, refs: with(func(e *commerce.EvidenceRefs) { e.ComplianceSnapshotID = e.PricingSnapshotID }),
			code: toolkit.Forbidden, reason: "evidence_missing"},
		{name: "another workflow's evidence totalled here", rig: foreign, refs: func() commerce.EvidenceRefs { return refs },
			code: toolkit.Forbidden, reason: "evidence_foreign"},
	} {
		a.check(t)
	}
	s.mustHaveNoDrafts(t)

	// The genuine total, sealed over this workflow's evidence, is taken.
	env, reason = r.create(genuine)
	var draft commerce.DraftOrder
	if !env.OK || reason != "" {
		t.Fatalf("the genuine sealed total was refused: %+v", env.Error)
	}
	mustDecode(t, env, &draft)
	if draft.GrandTotal != genuine.GrandTotal || draft.DraftOrderID == "" {
		t.Fatalf("draft %+v for total %+v", draft, genuine.GrandTotal)
	}
}
