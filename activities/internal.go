package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// callerNamedTools are the workflow types that call whichever tool their
// input names (toolcall.WorkflowName; activities sit below workflows and
// cannot import it): what an invoker without a caller
// policy (a test's) still refuses internal tools to.
var callerNamedTools = map[string]bool{"ToolCallLocalFirst": true}

// callerRefusal is why the run this activity belongs to may not call tool
// (docs/quote-seals.md#who-may-call-a-step): nil when it may. The workflow
// type is the one Temporal gives the activity, so a worker of someone
// else's that schedules our activity on our task queue is refused unless
// its type is one we register, and a step of a flow runs only for the
// flow that owns it. Outside an activity (a test calling the method) there
// is no run to ask about.
func callerRefusal(ctx context.Context, inv *toolkit.Invoker, tool string) *toolkit.Error {
	if !activity.IsActivity(ctx) {
		return nil
	}
	wt := activity.GetInfo(ctx).WorkflowType.Name
	spec, ok := inv.Registry().Spec(tool)
	if !ok {
		spec = toolkit.Spec{Name: tool}
	}
	callers := inv.Callers()
	if callers == nil {
		if ok && spec.Internal && callerNamedTools[wt] {
			return toolkit.InternalToolError(tool)
		}
		return nil
	}
	refused := callers.Refusal(wt, spec)
	if refused != nil {
		activity.GetLogger(ctx).Warn("tool call refused: caller", "tool", tool, "workflow_type", wt,
			"reason", refused.Details["reason"])
	}
	return refused
}
