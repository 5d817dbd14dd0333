package flow

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// LocalFirst makes one attempt of a call as a local activity and hands
// over to the regular activity with the tool's whole retry policy when
// that attempt fails in a way a retry could fix: the draft order's write
// (docs/performance.md#local-first-write) and every tool call the Go
// client starts (docs/performance.md#tool-calls-local-first).
func LocalFirst(ctx workflow.Context, spec toolkit.Spec, c Call, in activities.CallToolInput) workflow.Future {
	return localFirst(ctx, spec, c, in)
}
