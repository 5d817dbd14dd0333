package toolcall

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// ToolCallLocalFirstWorkflowName is the tool call the Go client starts
// (docs/performance.md#tool-calls-local-first): ToolCall with the tool's
// first attempt in the worker.
const ToolCallLocalFirstWorkflowName = "ToolCallLocalFirst"

// ToolCallLocalFirst is ToolCall whose tool makes its first attempt as a
// local activity, inside the run's first workflow task, and hands over to
// the regular activity with the tool's whole retry policy only when that
// attempt fails in a way a retry could fix (flow.LocalFirst, as the draft
// order's write: docs/performance.md#local-first-write). A call that
// answers at once is one workflow task: no activity task, no second
// workflow task. Its answer is an envelope whatever happened, and the key
// is given back for an answer not worth keeping, as ToolCall's is. A new
// workflow type rather than a change of ToolCall, so ToolCall's recorded
// histories replay unchanged.
func (b Flow) ToolCallLocalFirst(ctx workflow.Context, in ToolCallInput) (ToolCallResult, error) {
	spec, refused := b.admit(ctx, &in)
	if refused != nil {
		return *refused, nil
	}
	var out activities.CallToolResult
	f := flow.LocalFirst(ctx, spec, flow.Call{Tool: in.Call.Tool, Summary: "call " + in.Call.Tool}, activities.CallToolInput{Call: in.Call})
	if err := f.Get(ctx, &out); err != nil {
		if ctx.Err() != nil {
			return ToolCallResult{}, err // cancelled: not an answer
		}
		return keyOrRelease(ToolCallResult{Envelope: toolkit.ErrorResponse(in.Call.Tool, spec.Version, err)})
	}
	return keyOrRelease(ToolCallResult(out))
}
