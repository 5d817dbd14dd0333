package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Tools runs any registered tool by name. Its CallTool is THE tool activity:
// every workflow calls tools through it (workflows' typed helper), and the
// generic ToolCall workflow (how a backend or an MCP server calls a single
// tool durably) uses it too.
type Tools struct {
	Invoker *toolkit.Invoker
}

// CallToolInput is one tool call: the tool's name, the request envelope and
// the tool's input as raw JSON (validated against the tool's schema by the
// invoker).
type CallToolInput struct {
	Call toolkit.ToolCall `json:"call"`
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
	return CallToolResult{Envelope: env}, err
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
