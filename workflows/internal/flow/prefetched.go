package flow

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
)

// prefetchedKey carries a run's prefetched answers in its context.
type prefetchedKey struct{}

// Prefetched are the answers of a quote round made ahead, by correlation
// id; each is taken at most once.
type Prefetched map[string]activities.RoundCall

// takePrefetched returns the prefetched answer of a call, if the round
// made this call with this input, and forgets it.
func takePrefetched(ctx workflow.Context, c Call, raw []byte) (activities.CallToolResult, bool) {
	pre, _ := ctx.Value(prefetchedKey{}).(Prefetched)
	got, ok := pre[c.Req.CorrelationID]
	// encoding/json is deterministic (PrefetchSHA256 re-encodes a total's
	// input without its refs); workflowcheck sees only reflection.
	//workflowcheck:ignore
	if !ok || got.Tool != c.Tool || got.InputSHA256 != activities.PrefetchSHA256(c.Args, raw) {
		return activities.CallToolResult{}, false
	}
	delete(pre, c.Req.CorrelationID)
	return activities.CallToolResult{Envelope: got.Envelope}, true
}

// settled is a future already resolved with v.
func settled(ctx workflow.Context, v any) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	set.Set(v, nil)
	return f
}

// WithPrefetched is ctx carrying pre, whose answers the run's tool calls
// take (CallTool) when they make the very call the round made.
func WithPrefetched(ctx workflow.Context, pre Prefetched) workflow.Context {
	return workflow.WithValue(ctx, prefetchedKey{}, pre)
}
