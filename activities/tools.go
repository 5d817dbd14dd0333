package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Tools runs any registered tool by name. Its CallTool is THE tool activity:
// every workflow calls tools through it (workflows' typed helper), and the
// generic ToolCall workflow (how a backend or an MCP server calls a single
// tool durably) uses it too.
type Tools struct {
	Invoker *toolkit.Invoker
	// FX is the exchange rates the tools price with (nil: the shipped
	// table) and Clock their clock (nil: time.Now), for RatesInUse.
	FX    commerce.FXSource
	Clock func() time.Time
}

// CallToolInput is one tool call: the tool's name, the request envelope and
// the tool's input as raw JSON (validated against the tool's schema by the
// invoker).
type CallToolInput struct {
	Call toolkit.ToolCall `json:"call"`
	// FailRefusal asks for a refusal as a failed attempt instead of a
	// result: a non-retryable ApplicationError of its code whose details
	// are the error and the CallToolResult (RefusalError). A staff
	// decision support.record_approval refuses is then a failed activity
	// in the Web UI, not a completed one (docs/approvals.md#what-staff-see).
	FailRefusal bool `json:"fail_refusal,omitempty"`
}

// CallToolResult is the response envelope of the call, refusals included;
// auditors find it under "envelope" like every other tool activity's.
type CallToolResult struct {
	Envelope toolkit.Response `json:"envelope"`
}

// CallTool invokes the named tool through the one pipeline. Every answer
// is a result: data (ok) or a refusal (ok=false, error, and the evidence
// snapshot of the refusal). Only a retryable failure (UPSTREAM_ERROR,
// TIMEOUT, RATE_LIMITED, CONFLICT) fails the attempt, so Temporal retries
// it under the tool's retry policy.
func (a *Tools) CallTool(ctx context.Context, in CallToolInput) (CallToolResult, error) {
	env, err := Call(ctx, a.Invoker, in.Call.Tool, in.Call.Request, in.Call.Input)
	if err == nil && !env.OK && in.FailRefusal {
		return CallToolResult{}, RefusalError(env)
	}
	return CallToolResult{Envelope: env}, err
}

// RefusalError is a tool's refusal as a failed attempt
// (CallToolInput.FailRefusal): never retried, its code the error's type,
// its details the error and the whole CallToolResult, so the workflow
// still reads the envelope (RefusalOf) and the audit checks it against
// the refusal's evidence snapshot.
func RefusalError(env toolkit.Response) error {
	te := env.Error
	if te == nil {
		te = toolkit.Errorf(toolkit.UpstreamError, "tool %s answered ok=false without an error", env.Tool)
	}
	return temporal.NewApplicationErrorWithOptions(te.Message, string(te.Code), temporal.ApplicationErrorOptions{
		NonRetryable: true, Details: []any{*te, CallToolResult{Envelope: env}},
	})
}

// RefusalOf is the envelope a RefusalError carries, if err is one.
func RefusalOf(err error) (toolkit.Response, bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.HasDetails() {
		return toolkit.Response{}, false
	}
	var te toolkit.Error
	var res CallToolResult
	if ae.Details(&te, &res) != nil || res.Envelope.OK || res.Envelope.Error == nil {
		return toolkit.Response{}, false
	}
	return res.Envelope, true
}

// Call is the one tool call every activity shares (and any activity a test
// defines): the invoker told which activity runs it, then the envelope of
// any answer, or the Temporal error of a failure worth retrying.
func Call(ctx context.Context, inv *toolkit.Invoker, tool string, req toolkit.Request, input any) (toolkit.Response, error) {
	return CallIn(ctx, inv, nil, tool, req, input)
}

// CallIn is Call with the snapshot staged in batch (nil: written at once;
// docs/evidence.md#staged-batches).
func CallIn(ctx context.Context, inv *toolkit.Invoker, batch *toolkit.Batch, tool string, req toolkit.Request, input any) (toolkit.Response, error) {
	if refused := callerRefusal(ctx, inv, tool); refused != nil {
		return toolkit.ErrorResponse(tool, "", refused), nil
	}
	resp, err := inv.InvokeIn(toolkit.WithCall(ctx, callOf(ctx)), batch, tool, req, input)
	if err != nil && retries(inv, tool, toolkit.AsError(err).Code) {
		return toolkit.Response{}, ApplicationError(err)
	}
	return *resp, nil
}

// retries reports whether tool's retry policy retries code (an
// unregistered tool: the code table's answer).
func retries(inv *toolkit.Invoker, tool string, code toolkit.Code) bool {
	if spec, ok := inv.Registry().Spec(tool); ok {
		return spec.Retry.Retries(code)
	}
	return code.Retryable()
}

// ListToolsInput asks for the worker's tool catalogue; it has no fields.
type ListToolsInput struct{}

// ListToolsResult is every registered ToolSpec, sorted by name.
type ListToolsResult struct {
	Tools []toolkit.Spec `json:"tools"`
}

// ListTools returns the specs of the tools this worker serves: the worker's
// registry is the source of truth, not a copy in the caller.
func (a *Tools) ListTools(context.Context, ListToolsInput) (ListToolsResult, error) {
	return ListToolsResult{Tools: a.Invoker.Registry().Specs()}, nil
}

// callOf locates the running activity for the invoker's evidence and audit
// rows. Outside an activity it is what the caller set with toolkit.WithCall:
// the gateway's direct reads (docs/mcp.md#direct-reads) run the tool with
// the same CallIn; zero for a test calling the method directly.
func callOf(ctx context.Context) toolkit.CallContext {
	if !activity.IsActivity(ctx) {
		return toolkit.CallFrom(ctx)
	}
	info := activity.GetInfo(ctx)
	return toolkit.CallContext{
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, ActivityType: info.ActivityType.Name, Attempt: info.Attempt,
		WorkflowType: workflowTypeOf(info),
	}
}

// workflowTypeOf is the calling run's type, recorded (signed) in its
// evidence rows and draft rows (docs/evidence.md#row-signatures).
func workflowTypeOf(info activity.Info) string {
	if info.WorkflowType == nil {
		return ""
	}
	return info.WorkflowType.Name
}
