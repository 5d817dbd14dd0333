package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// internalOwners are the workflow types whose steps the internal tools are
// (docs/quote-seals.md#internal-tools): the draft order's total and write
// run only inside a draft order. The name is workflows.DraftOrderWorkflowName
// (activities sit below workflows and cannot import it).
var internalOwners = map[string]bool{"DraftOrder": true}

// internalRefusal refuses an internal tool called by an activity of any
// other workflow type (a ToolCall started with a bare SDK or the temporal
// CLI): nil when the call may go ahead. Outside an activity (a test calling
// the invoker's tools directly) there is no workflow to check.
func internalRefusal(ctx context.Context, inv *toolkit.Invoker, tool string) *toolkit.Error {
	spec, ok := inv.Registry().Spec(tool)
	if !ok || !spec.Internal || !activity.IsActivity(ctx) {
		return nil
	}
	if internalOwners[activity.GetInfo(ctx).WorkflowType.Name] {
		return nil
	}
	return toolkit.InternalToolError(tool)
}
