package workflows

import (
	"fmt"
	"regexp"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Workflow type names and the id prefix of the generic tool workflows.
const (
	ToolCallWorkflowName  = "ToolCall"
	ListToolsWorkflowName = "ListTools"
	ToolCallIDPrefix      = "tool-call/"
)

// callerCorrelation is the shape of a correlation id a caller may bring
// (seed 003 MCP-INV-05).
var callerCorrelation = regexp.MustCompile(`^corr-[0-9a-f]{16}$`)

// ToolCallInput is one call of one tool.
type ToolCallInput struct {
	Call toolkit.ToolCall `json:"call"`
	// refused is why strict decoding refused the input (UnmarshalJSON).
	refused *toolkit.Error
}

// versionStrictToolCall marks runs that refuse an input strict decoding
// refused (duplicate keys, unknown fields); written only for such a run.
const versionStrictToolCall = "tool-call-strict-input"

// ToolCallResult is the tool's response envelope, with its evidence.
type ToolCallResult struct {
	Envelope toolkit.Response `json:"envelope"`
}

// ToolCallID is the workflow id of a tool call: tool-call/{user_id}/{key},
// where key is the idempotency key for a write tool and the request id
// otherwise. Like the draft order's, the id is the idempotency key: the
// same call started twice reaches the same run and the same answer.
func ToolCallID(call toolkit.ToolCall) (string, error) {
	if err := CheckUserID(call.Request.UserID); err != nil {
		return "", err
	}
	key := call.Request.IdempotencyKey
	if key == "" {
		key = call.Request.RequestID
	}
	if err := CheckIdempotencyKey(key); err != nil {
		return "", fmt.Errorf("request_id or idempotency_key: %w", err)
	}
	return ToolCallIDPrefix + call.Request.UserID + "/" + key, nil
}

// ToolCall runs one tool as an activity with the tool's own timeout and
// retry contract. A tool failure fails the workflow with the tool's code.
func ToolCall(ctx workflow.Context, in ToolCallInput) (ToolCallResult, error) {
	// Runs recorded before strict decoding (no marker) ran what they got.
	if in.refused != nil && workflow.GetVersion(ctx, versionStrictToolCall, workflow.DefaultVersion, 1) == 1 {
		return ToolCallResult{}, toolkit.ApplicationError(in.refused)
	}
	if in.Call.Tool == "" {
		return ToolCallResult{}, invalidInput("tool call names no tool")
	}
	spec := toolSpec(in.Call.Tool)
	// A caller that made a correlation id at its entry (the MCP gateway)
	// keeps it, so one id finds the request, the run and the evidence.
	given := in.Call.Request.CorrelationID
	in.Call.Request = envelope(ctx, in.Call.Request, "tool/"+in.Call.Tool)
	if callerCorrelation.MatchString(given) {
		in.Call.Request.CorrelationID = given
	}
	actx := toolOptions(ctx, spec, "call "+in.Call.Tool)
	var out activities.CallToolResult
	var tools *activities.Tools
	if err := workflow.ExecuteActivity(actx, tools.CallTool, activities.CallToolInput{Call: in.Call}).Get(actx, &out); err != nil {
		return ToolCallResult{}, err
	}
	return ToolCallResult(out), nil
}

// ListToolsInput asks for the worker's tool catalogue; it has no fields.
type ListToolsInput struct{}

// ListToolsResult is every ToolSpec the worker serves.
type ListToolsResult struct {
	Tools []toolkit.Spec `json:"tools"`
}

// ListTools asks a worker of the task queue for its registry's specs.
func ListTools(ctx workflow.Context, _ ListToolsInput) (ListToolsResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		Summary:             "list the worker's tools",
	})
	var out activities.ListToolsResult
	var tools *activities.Tools
	if err := workflow.ExecuteActivity(actx, tools.ListTools, activities.ListToolsInput{}).Get(actx, &out); err != nil {
		return ListToolsResult{}, err
	}
	return ListToolsResult(out), nil
}

// ToolCallStartOptions start a tool call idempotently (the rules are
// beside DraftOrderStartOptions): the id is ToolCallID(call); a second
// start while it runs attaches to it, a start after it completed reads
// that answer, and a start after it failed runs the call again (a write
// tool's own idempotency key keeps that from writing twice).
func ToolCallStartOptions(taskQueue string, call toolkit.ToolCall) (client.StartWorkflowOptions, error) {
	id, err := ToolCallID(call)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	return onceStartOptions(id, taskQueue, FlowToolCall, "CALLING", "tool call "+call.Tool), nil
}
