package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// callerNamedTools are the workflow types that call whichever tool their
// input names (toolcall.WorkflowName; activities sit below workflows and
// cannot import it). Every other workflow calls the tools its own code
// names, so only these can be pointed at an internal step
// (docs/quote-seals.md#internal-tools).
var callerNamedTools = map[string]bool{"ToolCallLocalFirst": true}

// internalRefusal refuses an internal tool called from a tool call run (one
// started with a bare SDK or the temporal CLI, past the client's check):
// nil when the call may go ahead.
func internalRefusal(ctx context.Context, inv *toolkit.Invoker, tool string) *toolkit.Error {
	spec, ok := inv.Registry().Spec(tool)
	if !ok || !spec.Internal || !activity.IsActivity(ctx) {
		return nil
	}
	if !callerNamedTools[activity.GetInfo(ctx).WorkflowType.Name] {
		return nil
	}
	return toolkit.InternalToolError(tool)
}
