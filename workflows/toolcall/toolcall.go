package toolcall

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// Workflow type names and the id prefix of the generic tool workflows.
// WorkflowName keeps the name the tool call was registered under when it
// was added beside an older type: runs pinned to the current build replay
// under it (docs/versioning.md).
const (
	WorkflowName          = "ToolCallLocalFirst"
	ListToolsWorkflowName = "ListTools"
	IDPrefix              = "tool-call/"
)

// Input is one call of one tool.
type Input struct {
	Call toolkit.ToolCall `json:"call"`
	// refused is why strict decoding refused the input (UnmarshalJSON).
	refused *toolkit.Error
}

// Result is the tool's response envelope, with its evidence: an
// answer (ok) or a refusal (ok=false, error, and the refusal's evidence),
// or the error envelope of a call that could not reach the tool.
type Result struct {
	Envelope toolkit.Response `json:"envelope"`
}

// ID is the workflow id of a tool call: tool-call/{user_id}/{key},
// where key is the idempotency key for a write tool and the request id
// otherwise. Like the draft order's, the id is the idempotency key: the
// same call started twice reaches the same run and the same answer.
func ID(call toolkit.ToolCall) (string, error) {
	if err := workflows.CheckUserID(call.Request.UserID); err != nil {
		return "", err
	}
	key, field := call.Request.IdempotencyKey, "idempotency_key"
	if key == "" {
		key, field = call.Request.RequestID, "request_id"
	}
	if err := workflows.CheckKey(field, key); err != nil {
		// The message names the field the caller sent, the one that
		// keys this call.
		return "", toolkit.Errorf(toolkit.InvalidArgument, "%v: it keys the tool call", err).
			WithDetail("fields", []string{"request." + field}).WithRecovery("fix the named fields and call again")
	}
	return IDPrefix + call.Request.UserID + "/" + key, nil
}

// Flow is the tool call bound to the specs of the tools it calls
// (their activity options come from the specs).
type Flow struct{ Specs flow.ToolSpecs }

// Run (registered as WorkflowName, "ToolCallLocalFirst") runs one tool
// and returns its envelope whatever the answer, so a caller reads one
// shape whatever happened: a refusal, an unknown tool or a call that
// failed through its retries is a result with ok=false, not a failed
// workflow (unless its key is released: keyOrRelease). The tool makes its
// first attempt as a local activity, inside the run's first workflow
// task, and hands over to the regular activity with the tool's whole
// retry policy only when that attempt fails in a way a retry could fix
// (flow.LocalFirst, as the draft order's write:
// docs/performance.md#local-first-write). A call that answers at once is
// one workflow task: no activity task, no second workflow task
// (docs/performance.md#local-first-write).
func (b Flow) Run(ctx workflow.Context, in Input) (Result, error) {
	spec, refused := b.admit(ctx, &in)
	if refused != nil {
		return keyOrRelease(*refused)
	}
	var out activities.CallToolResult
	f := flow.LocalFirst(ctx, spec, flow.Call{Tool: in.Call.Tool, Summary: "call " + in.Call.Tool}, activities.CallToolInput{Call: in.Call})
	if err := f.Get(ctx, &out); err != nil {
		if ctx.Err() != nil {
			return Result{}, err // cancelled: not an answer
		}
		return keyOrRelease(Result{Envelope: toolkit.ErrorResponse(in.Call.Tool, spec.Version, err)})
	}
	return keyOrRelease(Result(out))
}

// ReleasedKeyType is the error type of a tool call that ended without
// holding its key; its details carry the Result.
const ReleasedKeyType = "TOOL_CALL_NOT_KEPT"

// keyOrRelease returns res, or fails the run with res in the error's
// details when res holds no answer its key keeps (toolkit.Response.KeepsKey:
// a retryable failure, a refused input), so the idempotency key is free
// again (docs/envelope.md#idempotency): the reuse policy keeps only
// completed runs.
func keyOrRelease(res Result) (Result, error) {
	if res.Envelope.KeepsKey() {
		return res, nil
	}
	e := res.Envelope.Error
	return Result{}, temporal.NewApplicationErrorWithOptions(
		fmt.Sprintf("%s: %s: %s (the key is free for the next call)", res.Envelope.Tool, e.Code, e.Message),
		ReleasedKeyType, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{res}})
}

// toolRequest completes the call's envelope. A caller that made a
// correlation id at its entry (the MCP gateway) keeps it, so one id finds
// the request, the run and the evidence.
func toolRequest(ctx workflow.Context, call toolkit.ToolCall) toolkit.Request {
	given := call.Request.CorrelationID
	req := flow.Envelope(ctx, call.Request, "tool/"+call.Tool)
	if toolkit.ValidCorrelationID(given) {
		req.CorrelationID = given
	}
	return req
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

// StartOptions start a tool call idempotently (the rules are
// beside draftorder.StartOptions): the id is ID(call); a second
// start while it runs attaches to it, a start after it completed reads
// that answer, and a start after it failed runs the call again (a write
// tool's own idempotency key keeps that from writing twice).
func StartOptions(taskQueue string, call toolkit.ToolCall) (client.StartWorkflowOptions, error) {
	id, err := ID(call)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	fp, err := Fingerprint(call)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := workflows.OnceStartOptions(id, taskQueue, workflows.FlowToolCall, "CALLING", "tool call "+call.Tool)
	opts.Memo = map[string]any{workflows.MemoInputFingerprint: fp}
	return opts, nil
}

// toolCallDoc is what makes two tool calls under one key the same call:
// who, which tool, with which input, for real or as a dry run. Request
// ids, trace, locale and correlation ids are how it was asked, not what.
type toolCallDoc struct {
	UserID string          `json:"user_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	DryRun bool            `json:"dry_run"`
}

// Fingerprint is "sha256:" and the hex SHA-256 of the canonical
// JSON (RFC 8785) of the call's identity (toolCallDoc): the first
// request's digest a reused key with other arguments is refused with
// (docs/envelope.md#idempotency). Input key order and number spelling do
// not change it; any other difference does. It holds no input in clear.
func Fingerprint(call toolkit.ToolCall) (string, error) {
	in := call.Input
	if len(in) == 0 {
		in = json.RawMessage("null")
	}
	return toolkit.CanonicalHash(toolCallDoc{UserID: call.Request.UserID, Tool: call.Tool, Input: in, DryRun: call.Request.DryRun})
}

// admit is the call's spec, with the call's request filled in, or the
// envelope that refuses the call before anything runs: an input strict
// decoding refused, a call naming no tool, a tool the worker does not know.
func (b Flow) admit(ctx workflow.Context, in *Input) (toolkit.Spec, *Result) {
	if in.refused != nil {
		return toolkit.Spec{}, &Result{Envelope: toolkit.ErrorResponse(in.Call.Tool, "", in.refused)}
	}
	if in.Call.Tool == "" {
		return toolkit.Spec{}, &Result{Envelope: toolkit.ErrorResponse("", "", toolkit.Errorf(toolkit.InvalidArgument, "tool call names no tool").
			WithDetail("fields", []string{"tool"}))}
	}
	spec, err := b.Specs.Get(in.Call.Tool)
	if err != nil {
		return toolkit.Spec{}, &Result{Envelope: toolkit.ErrorResponse(in.Call.Tool, "", err)}
	}
	in.Call.Request = toolRequest(ctx, in.Call)
	return spec, nil
}
