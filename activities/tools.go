package activities

import (
	"context"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Tools runs any registered tool by name: the activity behind the generic
// ToolCall workflow, which is how a backend (and later an MCP server) calls
// a single tool durably, with evidence, without a purpose-built workflow.
type Tools struct {
	Invoker *toolkit.Invoker
}

// CallToolInput is one tool call: the tool's name, the request envelope and
// the tool's input (validated against the tool's schema by the invoker).
type CallToolInput struct {
	Call toolkit.ToolCall `json:"call"`
}

// CallToolResult is the response envelope of the call; auditors find it
// under "envelope" like every other tool activity's.
type CallToolResult struct {
	Envelope toolkit.Response `json:"envelope"`
}

// CallTool invokes the named tool through the one pipeline.
func (a *Tools) CallTool(ctx context.Context, in CallToolInput) (CallToolResult, error) {
	resp, err := a.Invoker.Invoke(ctx, in.Call.Tool, in.Call.Request, in.Call.Input)
	if err != nil {
		return CallToolResult{}, toolkit.ApplicationError(err)
	}
	return CallToolResult{Envelope: *resp}, nil
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
