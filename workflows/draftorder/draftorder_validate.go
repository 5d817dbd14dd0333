package draftorder

import (
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// Check is the one check of a draft order's input: the client and the
// starter run it before a start, the workflow runs it at its start, so a
// start is refused for exactly what the run would refuse. It returns the
// input with its defaults filled, or a *toolkit.Error (INVALID_ARGUMENT
// naming the fields; UPSTREAM_ERROR only if the built-in schemas or rule
// data cannot be read).
//
// It covers the input's own fields, the request envelope every tool call
// of the run carries (envelope.request.json), the first tool calls' inputs
// against those tools' compiled input schemas (items, quantities, SKU
// format, currency format, address field lengths) and the facts the
// built-in rule data decides (currency quotable, destination modelled:
// commerce.CheckOrderFacts). What only the catalog in PostgreSQL knows
// (an unknown or discontinued SKU, stock) is the pricing tool's answer;
// such a run completes with that outcome (docs/errors.md#draft-order-outcomes).
//
// Check reads no clock, environment or database, so it is deterministic
// workflow code; its answer changes only with the code and data of a
// deployment.
func (in Input) Check() (Input, error) {
	r := &in.Request
	if r.Actor.Type == "" && r.Actor.ID == "" {
		// A backend that starts the flow on a user's behalf: the user is
		// the actor.
		r.Actor = toolkit.Actor{Type: toolkit.ActorUser, ID: r.UserID}
	}
	if err := workflows.CheckUserID(r.UserID); err != nil {
		return in, refuse("request.user_id", "%v", err)
	}
	if err := workflows.CheckIdempotencyKey(r.IdempotencyKey); err != nil {
		return in, refuse("request.idempotency_key", "%v", err)
	}
	if in.MerchantID != "" && !merchantIDPattern.MatchString(in.MerchantID) {
		return in, refuse("merchant_id", "merchant_id must be a merchant row's id (m_…)")
	}
	if in.PaymentPollEvery < 0 {
		return in, refuse("payment_poll_every", "payment_poll_every must not be negative")
	}
	if len(in.Items) == 0 {
		return in, refuse("items", "items must not be empty")
	}
	if in.Currency == "" {
		in.Currency = r.Currency
	}
	if in.Currency == "" {
		return in, refuse("currency", "currency is required (input.currency or request.currency)")
	}
	if in.ShipTo.Country == "" {
		return in, refuse("ship_to.country", "ship_to.country is required")
	}
	if in.ShipTo.Name == "" {
		// The quote tools do not need it, but the draft order does: refuse
		// now rather than after the user confirmed a total.
		return in, refuse("ship_to.name", "ship_to.name is required")
	}
	if in.ShippingService == "" {
		in.ShippingService = DefaultShippingService
	}
	switch in.ShippingService {
	case commerce.ServiceEconomy, commerce.ServiceStandard, commerce.ServiceExpress:
	default:
		return in, refuse("shipping_service", "shipping_service %q is invalid, one of economy, standard, express", in.ShippingService)
	}
	if in.Incoterm == "" {
		in.Incoterm = commerce.IncotermDDP
	}
	if in.Incoterm != commerce.IncotermDDP && in.Incoterm != commerce.IncotermDAP {
		return in, refuse("incoterm", "incoterm %q is invalid, one of DDP, DAP", in.Incoterm)
	}
	var err error
	if in.ConfirmWindow, err = window("confirm_window", in.ConfirmWindow, DefaultConfirmWindow); err != nil {
		return in, err
	}
	if in.ApprovalWindow, err = window("approval_window", in.ApprovalWindow, approval.DefaultWindow); err != nil {
		return in, err
	}
	if in.ApprovalConfidence < 0 || in.ApprovalConfidence > 1 {
		return in, refuse("approval_confidence", "approval_confidence must be in (0,1], or 0 for the default")
	}
	if in.ApprovalConfidence == 0 {
		in.ApprovalConfidence = DefaultApprovalConfidence
	}
	if err := checkRequest(in.Request); err != nil {
		return in, err
	}
	if err := checkFirstToolInputs(in); err != nil {
		return in, err
	}
	return in, commerce.CheckOrderFacts(in.Currency, in.ShipTo)
}

// Validate is Check for a caller that only needs the verdict.
func (in Input) Validate() error {
	_, err := in.Check()
	return err
}

// window is a positive duration, 0 meaning the default; a negative one is
// refused rather than silently replaced.
func window(field string, d, def time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return d, refuse(field, "%s must be a positive duration (nanoseconds), or 0 for the default %s", field, def)
	case d == 0:
		return def, nil
	}
	return d, nil
}

// checkRequest is the envelope check of every tool call of the run, with
// the ids the workflow fills in per call.
func checkRequest(req toolkit.Request) error {
	if req.RequestID == "" {
		req.RequestID = "req-0000000000000000"
	}
	req.CorrelationID = "corr-0000000000000000"
	err := toolkit.CheckRequest(req)
	if te := toolkit.AsError(err); te != nil {
		fields, _ := te.Details["fields"].([]string)
		named := make([]string, 0, len(fields))
		for _, f := range fields {
			named = append(named, "request."+strings.TrimPrefix(f, "(root)."))
		}
		msg := te.Message
		if problems, ok := te.Details["problems"].([]string); ok {
			msg = "request envelope is invalid: request." + strings.Join(problems, "; request.")
		}
		return toolkit.Errorf(te.Code, "%s", msg).WithDetail("fields", named).
			WithRecovery("fix the named fields and call again")
	}
	return nil
}

// checkFirstToolInputs validates what the quote step sends the origin
// choice, pricing and compliance against those tools' input schemas (the
// same compiled schemas the invoker uses), naming the draft order's fields.
func checkFirstToolInputs(in Input) error {
	set := toolkit.BuiltinSchemas()
	asOrder := func(f string) string {
		f = strings.TrimPrefix(f, "(root).")
		if rest, ok := strings.CutPrefix(f, "destination"); ok {
			return "ship_to" + rest
		}
		return f
	}
	if err := set.CheckToolInput(commerce.ToolChooseOrigins, in.OriginsArgs(), asOrder); err != nil {
		return err
	}
	if err := set.CheckToolInput(commerce.ToolGetQuote,
		commerce.GetQuoteArgs{Items: in.Items, Currency: in.Currency}, asOrder); err != nil {
		return err
	}
	return set.CheckToolInput(commerce.ToolCheckCompliance,
		commerce.CheckComplianceArgs{Items: in.Items, Destination: in.ShipTo}, asOrder)
}

// refuse is an INVALID_ARGUMENT naming one field.
func refuse(field, format string, args ...any) *toolkit.Error {
	return toolkit.Errorf(toolkit.InvalidArgument, format, args...).WithDetail("fields", []string{field}).
		WithRecovery("fix the named fields and call again")
}

// startCheck runs Check at the start of a run, the run's first step; a
// refusal is answered through the updates and ends the run canceled,
// never failed (refuseStart).
func startCheck(ctx workflow.Context, in Input) (Input, error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	// Check reads embedded rule data through sync.Once caches and sorts
	// every list it reports: deterministic, though workflowcheck sees the
	// schema library's map ranges.
	//workflowcheck:ignore
	checked, err := in.Check()
	if err == nil {
		err = checkWorkflowID(id, checked.Request)
	}
	if err != nil {
		return in, refuseStart(ctx, err)
	}
	return checked, nil
}

// checkWorkflowID refuses a run started under another id than the one the
// input's user and key name (a start that bypassed StartOptions).
func checkWorkflowID(workflowID string, r toolkit.Request) error {
	want, err := workflows.DraftOrderID(r.UserID, r.IdempotencyKey)
	if err != nil {
		return flow.InvalidInput("%v", err)
	}
	if workflowID != want {
		return flow.InvalidInput("workflow id must be %s (DraftOrderID of user_id and idempotency_key)", want)
	}
	return nil
}

// validateNextAction refuses, before anything is recorded, a next_action
// whose seen key is malformed, or whose order (sent with an
// Update-with-Start) is not this run's: INVALID_ARGUMENT naming the field
// when that order is itself invalid, CONFLICT naming the key when it is
// another order (other items, address, currency, service or incoterm).
// The run's own input passed Check at its start; the comparison costs two
// fingerprints, and Check only for an order that differs.
func (d *draftOrder) validateNextAction(ctx workflow.Context, in NextActionInput) error {
	if len(in.Seen) > maxSeenKey {
		return workflows.UpdateRefusal(d.id(ctx), UpdateNextAction, workflows.RejectMalformed, "seen is not an action key")
	}
	if in.Order == nil {
		return nil
	}
	//workflowcheck:ignore
	err := sameOrder(d.id(ctx), d.in, *in.Order)
	return activities.ApplicationError(err)
}

// sameOrder is nil when order is the order run started with (its
// fingerprint, defaults filled, is the run's), the check's refusal when
// order is invalid, CONFLICT otherwise.
func sameOrder(workflowID string, run, order Input) error {
	want, err := Fingerprint(run)
	if err != nil {
		return err
	}
	if got, err := Fingerprint(withOrderDefaults(order)); err == nil && got == want {
		return nil
	}
	checked, err := order.Check()
	if err != nil {
		return err
	}
	got, err := Fingerprint(checked)
	if err != nil || got == want {
		return err
	}
	key := order.Request.IdempotencyKey
	return toolkit.Errorf(toolkit.Conflict,
		"idempotency_key %s was already used for a different draft order (other items, address, currency, service or incoterm); "+
			"use a new key for a new order", key).
		WithDetail("tool", StartTool).WithDetail("idempotency_key", key).WithDetail("reason", "arguments differ").
		WithDetail("first_request_digest", want).WithDetail("workflow_id", workflowID).
		WithDetail("fields", []string{"request.idempotency_key"}).
		WithRecovery("start the new order with a new idempotency_key, or repeat the original order unchanged")
}

// StartTool names the start of a draft order in a CONFLICT's details: the
// MCP tool that starts it (docs/mcp.md).
const StartTool = "draft_order.start"

// withOrderDefaults fills what Check fills of the fields a fingerprint
// covers, so a repeat of the run's own order matches without a full Check.
func withOrderDefaults(in Input) Input {
	if in.Currency == "" {
		in.Currency = in.Request.Currency
	}
	if in.ShippingService == "" {
		in.ShippingService = DefaultShippingService
	}
	if in.Incoterm == "" {
		in.Incoterm = commerce.IncotermDDP
	}
	return in
}
