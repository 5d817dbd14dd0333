package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The draft order tools: an agent starts a draft order, shows the user the
// total, confirms the quote hash on the user's OK, or cancels. Approvals
// stay with support staff: an agent sees that a draft order waits for
// them, and cannot decide.
const (
	ToolDraftStart   = "draft_order.start"
	ToolDraftStatus  = "draft_order.status"
	ToolDraftConfirm = "draft_order.confirm"
	ToolDraftCancel  = "draft_order.cancel"
)

// maxWait bounds how long one draft order call waits (wait_seconds).
const maxWait = 55 * time.Second

// DraftOrderView is structuredContent of every draft order tool.
type DraftOrderView struct {
	OK         bool           `json:"ok"`
	Status     toolkit.Status `json:"status"`
	Tool       string         `json:"tool"`
	WorkflowID string         `json:"workflow_id"`
	State      string         `json:"state"`
	// Error says why the order cannot go on, or what is needed
	// (NEEDS_USER_CONFIRMATION), with next_steps naming the tools.
	Error *toolkit.Error `json:"error,omitempty"`
	// Confirmation: what to show the user, and what to send on their OK.
	Confirmation *ConfirmationAsk `json:"confirmation,omitempty"`
	// AwaitingStaff: support staff must decide first; the agent cannot.
	AwaitingStaff bool                          `json:"awaiting_staff"`
	Total         *commerce.Total               `json:"total,omitempty"`
	DraftOrder    *commerce.DraftOrder          `json:"draft_order,omitempty"`
	Evidence      []workflows.EvidenceRef       `json:"evidence"`
	Compliance    *draftorder.ComplianceSummary `json:"compliance,omitempty"`
	// Origins: where the order ships from, as parcels, and why (every
	// warehouse considered, its landed cost, why it lost).
	Origins *draftorder.OriginsSummary `json:"origins,omitempty"`
}

// ConfirmationAsk is a NEEDS_USER_CONFIRMATION answer.
type ConfirmationAsk struct {
	ShowUser ShowUser `json:"show_user"`
	Send     Send     `json:"send"`
}

// ShowUser is what the user must see before they agree.
type ShowUser struct {
	GrandTotal     commerce.Money `json:"grand_total"`
	DueOnDelivery  commerce.Money `json:"due_on_delivery"`
	ConfirmBy      time.Time      `json:"confirm_by"`
	PriceChanged   bool           `json:"price_changed"`
	QuoteExpiresAt time.Time      `json:"quote_expires_at"`
	// ShipsFrom: the warehouses the order ships from, one per parcel.
	ShipsFrom []string `json:"ships_from,omitempty"`
}

// Send is the exact call that confirms.
type Send struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

type draftTool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

var keyProp = map[string]any{"type": "string", "minLength": 8, "maxLength": 128, "pattern": "^[A-Za-z0-9._:-]+$",
	"description": "The draft order's key (e.g. a UUID): the same key is the same order, never two."}
var waitProp = map[string]any{"type": "integer", "minimum": 0, "maximum": 55,
	"description": "Seconds to wait for the next step (default 20); progress is notified meanwhile."}

func object(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": false, "required": required, "properties": props}
}

// draftOutputSchema describes DraftOrderView, structuredContent of every
// draft order tool: the top level exactly, the nested records (total,
// draft order, compliance, evidence) as objects, since they grow with
// the workflow (docs/mcp.md#draft-order-tools).
func draftOutputSchema() map[string]any {
	obj := map[string]any{"type": "object"}
	money := map[string]any{"type": "object", "required": []any{"amount", "currency"}}
	return map[string]any{
		"type":     "object",
		"required": []any{"ok", "status", "tool", "workflow_id", "state", "awaiting_staff", "evidence"},
		"properties": map[string]any{
			"ok":             map[string]any{"type": "boolean"},
			"status":         map[string]any{"enum": []any{"ok", "degraded", "empty", "error"}},
			"tool":           map[string]any{"type": "string"},
			"workflow_id":    map[string]any{"type": "string"},
			"state":          map[string]any{"type": "string"},
			"awaiting_staff": map[string]any{"type": "boolean", "description": "support staff must decide first; the agent cannot"},
			"error": map[string]any{"type": "object", "required": []any{"code", "message"},
				"description": "why the order cannot go on, or what is needed (NEEDS_USER_CONFIRMATION)"},
			"confirmation": map[string]any{
				"type": "object", "required": []any{"show_user", "send"},
				"properties": map[string]any{
					"show_user": map[string]any{"type": "object", "required": []any{"grand_total", "due_on_delivery", "confirm_by"},
						"properties": map[string]any{"grand_total": money, "due_on_delivery": money,
							"confirm_by": map[string]any{"type": "string", "format": "date-time"}}},
					"send": map[string]any{"type": "object", "required": []any{"tool", "arguments"},
						"properties": map[string]any{"tool": map[string]any{"const": ToolDraftConfirm}, "arguments": obj}},
				},
			},
			"total": obj, "draft_order": obj, "compliance": obj,
			"origins": map[string]any{"type": "object", "required": []any{"origins", "split", "rule", "parcels", "landed_cost", "candidates", "snapshot_id"},
				"description": "where the order ships from (one parcel per warehouse) and why: every warehouse considered, its landed cost, why it lost"},
			"evidence": map[string]any{"type": "array", "items": obj},
		},
	}
}

func (g *Gateway) draftOrderTools() []draftTool {
	f := false
	t := true
	ann := func(readOnly, destructive bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: true, OpenWorldHint: &f}
	}
	return []draftTool{
		{&mcp.Tool{
			Name: ToolDraftStart, OutputSchema: draftOutputSchema(), Title: "Draft order: start",
			Description: "Start pricing a basket for the user: quotes, shipping, compliance, duties and taxes, total. " +
				"Returns NEEDS_USER_CONFIRMATION with the total to show the user and the draft_order.confirm call to " +
				"send on their OK; or why the order cannot go on (OUT_OF_STOCK, ADDRESS_INVALID, COMPLIANCE_BLOCKED). " +
				"The same idempotency_key returns the same order.",
			InputSchema: object([]string{"idempotency_key", "items", "ship_to"}, map[string]any{
				"idempotency_key": keyProp,
				"items": map[string]any{"type": "array", "minItems": 1, "maxItems": 50, "items": object([]string{"sku", "quantity"},
					map[string]any{"sku": map[string]any{"type": "string"}, "quantity": map[string]any{"type": "integer", "minimum": 1}})},
				"ship_to": object([]string{"name", "line1", "city", "country"}, map[string]any{
					"name": map[string]any{"type": "string"}, "line1": map[string]any{"type": "string"},
					"line2": map[string]any{"type": "string"}, "city": map[string]any{"type": "string"},
					"region": map[string]any{"type": "string"}, "postal_code": map[string]any{"type": "string"},
					"country": map[string]any{"type": "string", "pattern": "^[A-Z]{2}$"}}),
				"currency":         map[string]any{"type": "string", "pattern": "^[A-Z]{3}$"},
				"shipping_service": map[string]any{"enum": []any{"economy", "standard", "express"}},
				"incoterm":         map[string]any{"enum": []any{"DDP", "DAP"}},
				"dry_run":          map[string]any{"type": "boolean"},
				"wait_seconds":     waitProp,
			}),
			Annotations: ann(false, false),
		}, g.draftStart},
		{&mcp.Tool{
			Name: ToolDraftStatus, OutputSchema: draftOutputSchema(), Title: "Draft order: status",
			Description: "Read a draft order's state: the total awaiting the user's confirmation (with the call to send), " +
				"whether support staff must decide first, or its result. Fails with NOT_FOUND for an unknown key.",
			InputSchema: object([]string{"idempotency_key"}, map[string]any{"idempotency_key": keyProp}),
			Annotations: ann(true, false),
		}, g.draftStatus},
		{&mcp.Tool{
			Name: ToolDraftConfirm, OutputSchema: draftOutputSchema(), Title: "Draft order: confirm",
			Description: "Only after the user agreed to the exact total: confirm it with the quote_hash draft_order.start or " +
				"draft_order.status returned. Creates the draft order once; PRICE_CHANGED means show the new total and ask again.",
			InputSchema: object([]string{"idempotency_key", "quote_hash"}, map[string]any{
				"idempotency_key": keyProp, "quote_hash": map[string]any{"type": "string", "minLength": 8},
				"wait_seconds": waitProp}),
			Annotations: ann(false, false),
		}, g.draftConfirm},
		{&mcp.Tool{
			Name: ToolDraftCancel, OutputSchema: draftOutputSchema(), Title: "Draft order: cancel",
			Description: "The user abandons the draft order before it is created. CONFLICT once it is being created or has ended.",
			InputSchema: object([]string{"idempotency_key"}, map[string]any{
				"idempotency_key": keyProp, "reason": map[string]any{"type": "string", "maxLength": 200}}),
			Annotations: ann(false, t),
		}, g.draftCancel},
	}
}

// draftArgs are the arguments of the draft order tools.
type draftArgs struct {
	IdempotencyKey string `json:"idempotency_key"`
	commerce.Order
	DryRun      bool   `json:"dry_run"`
	WaitSeconds *int   `json:"wait_seconds"`
	QuoteHash   string `json:"quote_hash"`
	Reason      string `json:"reason"`
}

func (a draftArgs) wait() time.Duration {
	if a.WaitSeconds == nil {
		return 20 * time.Second
	}
	return min(time.Duration(*a.WaitSeconds)*time.Second, maxWait)
}

// minAnswerWait is the least a start or confirm is given: each is one call
// that both sends and waits, and a shorter bound would cut the sending.
const minAnswerWait = 5 * time.Second

// answerWait bounds one start or confirm call (wait_seconds, at least
// minAnswerWait).
func (a draftArgs) answerWait() time.Duration { return max(a.wait(), minAnswerWait) }

// draftCall decodes the arguments, spends the budget and finds the
// workflow id from the actor's user and the key: an agent reaches only its
// own (or its tenant's) draft orders.
func (g *Gateway) draftCall(ctx context.Context, req *mcp.CallToolRequest, tool string) (draftArgs, Actor, string, *mcp.CallToolResult) {
	actor, _ := actorOf(ctx)
	corr := correlationOf(ctx)
	var a draftArgs
	refuse := func(e *toolkit.Error) *mcp.CallToolResult {
		return draftResult(DraftOrderView{Tool: tool, Error: e}, corr)
	}
	if len(req.Params.Arguments) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(req.Params.Arguments)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return a, actor, "", refuse(toolkit.Errorf(toolkit.InvalidArgument, "arguments of %s: %v", tool, err))
		}
	}
	if refused := g.budgets.spend(actor, len(req.Params.Arguments), time.Now()); refused != nil {
		return a, actor, "", refuse(refused)
	}
	id, err := workflows.DraftOrderID(actor.UserID(), a.IdempotencyKey)
	if err != nil {
		return a, actor, "", refuse(toolkit.Errorf(toolkit.InvalidArgument, "%v", err).
			WithDetail("fields", []string{"idempotency_key: " + err.Error()}))
	}
	return a, actor, id, nil
}

func (g *Gateway) draftStart(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, actor, id, refused := g.draftCall(ctx, req, ToolDraftStart)
	if refused != nil {
		return refused, nil
	}
	corr := correlationOf(ctx)
	in := draftorder.Input{
		Request: toolkit.Request{
			// The gateway names the run's request by the start's
			// correlation id: every step has a correlation id of its own
			// (two-phase audit), and this one finds them all.
			RequestID: corr, Actor: actor.envelopeActor(),
			UserID: actor.UserID(), Tenant: actor.Tenant, IdempotencyKey: a.IdempotencyKey, Currency: a.Currency,
			DryRun: a.DryRun, CorrelationID: corr,
		},
		Order: a.Order,
	}
	progressOf(ctx, req)("draft order: pricing the basket")
	// The start comes back with the draft order's first answer (the total
	// to confirm, the staff wait, or the end) in one call: nothing polls.
	wctx, cancel := context.WithTimeout(ctx, a.answerWait())
	defer cancel()
	h, err := g.opts.Client.StartDraftOrder(wctx, in)
	if err != nil && h.RunID != "" && toolkit.CodeOf(err) == toolkit.Timeout && ctx.Err() == nil {
		// Started, still working at wait_seconds: show it as it is.
		return g.statusView(ctx, ToolDraftStart, id, a, corr)
	}
	if err != nil {
		return g.draftError(ToolDraftStart, id, corr, err, h.RunID != "")
	}
	g.log.Info("mcp draft order started", zap.String("workflow_id", h.WorkflowID), zap.Bool("attached", h.Attached),
		zap.String("actor_id", actor.ID), zap.String("correlation_id", corr))
	return draftResult(view(ToolDraftStart, id, a.IdempotencyKey, h.Status), corr), nil
}

// statusWait bounds one status read: with Temporal down the SDK would
// retry until the caller gives up.
const statusWait = 10 * time.Second

// statusView answers with the draft order's status as it is now.
func (g *Gateway) statusView(ctx context.Context, tool, id string, a draftArgs, corr string) (*mcp.CallToolResult, error) {
	sctx, cancel := context.WithTimeout(ctx, statusWait)
	defer cancel()
	st, err := g.opts.Client.Status(sctx, id)
	if err != nil {
		return g.draftError(tool, id, corr, err, !g.unreachable(ctx, err))
	}
	return draftResult(view(tool, id, a.IdempotencyKey, st), corr), nil
}

func (g *Gateway) draftStatus(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, _, id, refused := g.draftCall(ctx, req, ToolDraftStatus)
	if refused != nil {
		return refused, nil
	}
	return g.statusView(ctx, ToolDraftStatus, id, a, correlationOf(ctx))
}

func (g *Gateway) draftConfirm(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, _, id, refused := g.draftCall(ctx, req, ToolDraftConfirm)
	if refused != nil {
		return refused, nil
	}
	corr := correlationOf(ctx)
	progressOf(ctx, req)("draft order: confirming the total")
	// The workflow answers this confirmation itself, once the draft order
	// exists (or why not).
	wctx, cancel := context.WithTimeout(ctx, a.answerWait())
	defer cancel()
	if err := g.opts.Client.Confirm(wctx, id, a.QuoteHash); err != nil {
		if toolkit.CodeOf(err) == toolkit.Timeout && ctx.Err() == nil {
			return g.statusView(ctx, ToolDraftConfirm, id, a, corr)
		}
		if toolkit.CodeOf(err) == toolkit.PriceChanged {
			st, serr := g.opts.Client.Status(ctx, id)
			if serr == nil {
				v := view(ToolDraftConfirm, id, a.IdempotencyKey, st)
				v.OK, v.Status, v.Error = false, toolkit.StatusError, toolkit.AsError(err)
				return draftResult(v, corr), nil
			}
		}
		return g.draftError(ToolDraftConfirm, id, corr, err, !g.unreachable(ctx, err))
	}
	return g.statusView(ctx, ToolDraftConfirm, id, a, corr)
}

func (g *Gateway) draftCancel(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, _, id, refused := g.draftCall(ctx, req, ToolDraftCancel)
	if refused != nil {
		return refused, nil
	}
	corr := correlationOf(ctx)
	if err := g.opts.Client.Cancel(ctx, id, a.Reason); err != nil {
		return g.draftError(ToolDraftCancel, id, corr, err, !g.unreachable(ctx, err))
	}
	return g.statusView(ctx, ToolDraftCancel, id, a, corr)
}

// view renders a status for the agent.
func view(tool, id, key string, st draftorder.Status) DraftOrderView {
	v := DraftOrderView{
		OK: true, Status: toolkit.StatusOK, Tool: tool, WorkflowID: id, State: st.State,
		AwaitingStaff: st.Approvals.Pending != nil, Total: st.Total, DraftOrder: st.DraftOrder,
		Evidence: st.Evidence, Compliance: st.Compliance, Origins: st.Origins,
	}
	switch {
	case st.Result != nil:
		v.State = st.Result.State
		if st.Result.DraftOrder != nil {
			v.DraftOrder = st.Result.DraftOrder
		}
		if st.Result.Code != "" {
			v.OK, v.Status = false, toolkit.StatusError
			v.Error = resultError(*st.Result)
		}
	case st.Confirmation != nil:
		c := st.Confirmation
		v.OK, v.Status = false, toolkit.StatusError
		v.Error = toolkit.Errorf(toolkit.NeedsUserConfirmation, "show the user the total; on their OK send confirmation.send").
			WithRecovery("show confirmation.show_user to the user and ask them to confirm the exact total", ToolDraftConfirm)
		v.Confirmation = &ConfirmationAsk{
			ShowUser: ShowUser{GrandTotal: c.GrandTotal, DueOnDelivery: c.DueOnDelivery, ConfirmBy: c.ConfirmBy,
				PriceChanged: c.PriceChanged, QuoteExpiresAt: c.QuoteExpiresAt, ShipsFrom: c.ShipsFrom},
			Send: Send{Tool: ToolDraftConfirm, Arguments: map[string]any{"idempotency_key": key, "quote_hash": c.QuoteHash}},
		}
	case st.Approvals.Pending != nil:
		v.Status = toolkit.StatusDegraded
	}
	if v.Evidence == nil {
		v.Evidence = []workflows.EvidenceRef{}
	}
	return v
}

// unreachable tells whether err (a timeout or an upstream failure) was
// Temporal being down: its health check does not answer either. A query
// that timed out on a live server (no worker) is not an outage.
func (g *Gateway) unreachable(ctx context.Context, err error) bool {
	if c := toolkit.CodeOf(err); c != toolkit.UpstreamError && c != toolkit.Timeout {
		return false
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	return g.opts.Client.Reachable(hctx) != nil
}

// draftError maps a client error: Temporal unreachable before anything
// ran is a -32001; everything else is a result the agent can act on.
func (g *Gateway) draftError(tool, id, corr string, err error, reached bool) (*mcp.CallToolResult, error) {
	te := toolkit.AsError(err)
	if te == nil {
		te = toolkit.Errorf(toolkit.UpstreamError, "%v", err)
	}
	if !reached && (te.Code == toolkit.UpstreamError || te.Code == toolkit.Timeout) {
		return nil, wire.NewError(corr, wire.ReasonTemporalUnavailable, nil, "the workflow service cannot be reached; retry")
	}
	g.log.Info("mcp draft order call refused", zap.String("tool", tool), zap.String("workflow_id", id),
		zap.String("error_code", string(te.Code)), zap.String("correlation_id", corr))
	return draftResult(DraftOrderView{Tool: tool, WorkflowID: id, Status: toolkit.StatusError, Error: te}, corr), nil
}

func draftResult(v DraftOrderView, corr string) *mcp.CallToolResult {
	if v.Status == "" {
		v.Status = toolkit.StatusError
	}
	if v.Evidence == nil {
		v.Evidence = []workflows.EvidenceRef{}
	}
	var text string
	switch {
	case v.Confirmation != nil:
		// The total in major units and the arguments as JSON: an agent
		// reading only the text must not show 22.60 EUR as "2260 EUR".
		show := v.Confirmation.ShowUser
		total := show.GrandTotal.Display()
		if show.DueOnDelivery.Amount > 0 {
			total += " (+ " + show.DueOnDelivery.Display() + " duty and tax due on delivery)"
		}
		args, _ := json.Marshal(v.Confirmation.Send.Arguments)
		text = fmt.Sprintf("NEEDS_USER_CONFIRMATION: show the user the total %s (confirm by %s); on their OK call %s with %s",
			total, show.ConfirmBy.Format(time.RFC3339), v.Confirmation.Send.Tool, args)
	case v.Error != nil:
		text = fmt.Sprintf("%s: %s: %s", v.Tool, v.Error.Code, v.Error.Message)
		if r := v.Error.RecoverySuggestion; r != "" {
			text += " — " + r
		}
	case v.AwaitingStaff:
		text = fmt.Sprintf("draft order %s waits for a support-staff decision; check draft_order.status later", v.WorkflowID)
	default:
		text = fmt.Sprintf("draft order %s: %s", v.WorkflowID, v.State)
	}
	return &mcp.CallToolResult{
		Meta: mcp.Meta{"correlation_id": corr}, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: v, IsError: !v.OK,
	}
}

// resultError is the error of a draft order that ended without a draft:
// the result's whole error object (a tool's refusal as its evidence holds
// it, details, recovery_suggestion, next_steps and can_retry included), so
// an agent gets what a tool-call refusal gives it. A result recorded
// without one has its code and message only.
func resultError(r draftorder.Result) *toolkit.Error {
	if r.Error != nil && r.Error.Code == r.Code {
		return r.Error
	}
	return toolkit.Errorf(r.Code, "%s", r.Message)
}
