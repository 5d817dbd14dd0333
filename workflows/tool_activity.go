package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// toolCall is one tool call made by workflow code.
type toolCall struct {
	// tool is the dotted tool name; its spec gives the activity options.
	tool string
	// req is the request envelope (correlation id already set).
	req toolkit.Request
	// args is the tool's input.
	args any
	// summary is what the Web UI shows for the activity.
	summary string
	// wrap, if set, runs the activity's start (a draft order re-runs a call
	// that failed on infrastructure: outlive); nil starts it once.
	wrap func(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future
	// handover, if set, runs before a local-first call (runsLocalFirst)
	// hands over to its regular activity.
	handover func(ctx workflow.Context) error
}

// run starts the activity through c.wrap, if any.
func (c toolCall) run(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future {
	if c.wrap == nil {
		return start(ctx)
	}
	return c.wrap(ctx, start)
}

// toolFuture is a tool call under way; Get returns its typed answer.
type toolFuture[T any] struct {
	f    workflow.Future
	tool string
}

// callTool starts one tool call with the activity options of the tool's
// spec: the one tool activity Tools.CallTool, as a local activity for a
// draft order's read-only in-process tools (runsLocal). A tool without a
// spec is a failed future (NOT_FOUND), never a call on made-up options.
func callTool[T any](ctx workflow.Context, specs toolSpecs, c toolCall) toolFuture[T] {
	spec, err := specs.get(c.tool)
	if err != nil {
		f, set := workflow.NewFuture(ctx)
		set.SetError(activities.ApplicationError(err))
		return toolFuture[T]{f: f, tool: c.tool}
	}
	// encoding/json is deterministic; workflowcheck only sees reflection
	// reaching the runtime's stack walker and GC.
	//workflowcheck:ignore
	raw, err := json.Marshal(c.args)
	if err != nil {
		f, set := workflow.NewFuture(ctx)
		set.SetError(activities.ApplicationError(toolkit.Errorf(toolkit.InvalidArgument, "input of %s is not JSON: %v", c.tool, err)))
		return toolFuture[T]{f: f, tool: c.tool}
	}
	if res, ok := takePrefetched(ctx, c, raw); ok {
		return toolFuture[T]{f: settled(ctx, res), tool: c.tool}
	}
	var tools *activities.Tools
	in := activities.CallToolInput{Call: toolkit.ToolCall{Tool: c.tool, Request: c.req, Input: raw}}
	local, first := runsLocal(ctx, spec), runsLocalFirst(ctx, spec)
	f := c.run(ctx, func(ctx workflow.Context) workflow.Future {
		switch {
		case local:
			return workflow.ExecuteLocalActivity(localToolOptions(ctx, spec, c.summary), tools.CallTool, in)
		case first:
			return localFirst(ctx, spec, c, in)
		}
		return workflow.ExecuteActivity(toolOptions(ctx, spec, c.summary), tools.CallTool, in)
	})
	return toolFuture[T]{f: f, tool: c.tool}
}

// Get waits for the answer: the data decoded into T and the envelope. A
// refusal is the error of its code (an ApplicationError), with its
// envelope — whose evidence names the refusal's snapshot — still returned.
func (t toolFuture[T]) Get(ctx workflow.Context) (T, toolkit.Response, error) {
	var out T
	var res activities.CallToolResult
	if err := t.f.Get(ctx, &res); err != nil {
		return out, toolkit.Response{}, err
	}
	env := res.Envelope
	if !env.OK {
		te := env.Error
		if te == nil {
			te = toolkit.Errorf(toolkit.UpstreamError, "tool %s answered ok=false without an error", t.tool)
		}
		return out, env, activities.ApplicationError(te)
	}
	//workflowcheck:ignore
	if err := env.Decode(&out); err != nil {
		return out, env, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%v", err))
	}
	return out, env, nil
}
