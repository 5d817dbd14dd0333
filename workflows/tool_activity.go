package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// changeToolActivity switches the workflows from the per-tool activities
// (GetQuote, Cite, RecordApproval …) to the one tool activity
// Tools.CallTool. Runs recorded before it replay on the per-tool
// activities: every call site asks workflow.GetVersion, through callTool
// (except in a draft order on changeLocalTools, whose one marker stands
// for this change too).
const changeToolActivity = "generic-tool-activity"

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
	f workflow.Future
	// legacy is the result field of a per-tool activity ("" for CallTool).
	legacy string
	tool   string
}

// callTool starts one tool call with the activity options of the tool's
// spec. On the current version it runs Tools.CallTool, as a local activity
// for the read-only in-process tools (runsLocal); runs recorded before
// changeToolActivity run the tool's own activity. A tool without a spec is
// a failed future (NOT_FOUND), never a call on made-up options.
func callTool[T any](ctx workflow.Context, specs toolSpecs, c toolCall) toolFuture[T] {
	spec, err := specs.get(c.tool)
	if err != nil {
		f, set := workflow.NewFuture(ctx)
		set.SetError(activities.ApplicationError(err))
		return toolFuture[T]{f: f, tool: c.tool}
	}
	if !onLocalTools(ctx) && workflow.GetVersion(ctx, changeToolActivity, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		la, ok := activities.LegacyActivityOf(c.tool)
		if !ok {
			f, set := workflow.NewFuture(ctx)
			set.SetError(activities.ApplicationError(toolkit.Errorf(toolkit.NotFound, "tool %s has no per-tool activity", c.tool)))
			return toolFuture[T]{f: f, tool: c.tool}
		}
		f := c.run(ctx, func(ctx workflow.Context) workflow.Future {
			return workflow.ExecuteActivity(toolOptions(ctx, spec, c.summary), la.Name, legacyInput{Request: c.req, Args: c.args})
		})
		return toolFuture[T]{f: f, legacy: la.ResultField, tool: c.tool}
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

// legacyInput has the shape of every per-tool activity's input.
type legacyInput struct {
	Request toolkit.Request `json:"request"`
	Args    any             `json:"args"`
}

// Get waits for the answer: the data decoded into T and the envelope. A
// refusal is the error of its code (an ApplicationError, as the per-tool
// activities failed), with its envelope — whose evidence names the
// refusal's snapshot — still returned.
func (t toolFuture[T]) Get(ctx workflow.Context) (T, toolkit.Response, error) {
	var out T
	if t.legacy != "" {
		var raw map[string]json.RawMessage
		if err := t.f.Get(ctx, &raw); err != nil {
			return out, toolkit.Response{}, err
		}
		//workflowcheck:ignore
		return decodeLegacy[T](t.tool, t.legacy, raw)
	}
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

// decodeLegacy reads a per-tool activity's result, {"<field>": T,
// "envelope": …}: the typed field as the activity returned it.
func decodeLegacy[T any](tool, field string, raw map[string]json.RawMessage) (T, toolkit.Response, error) {
	var out T
	var env toolkit.Response
	if err := json.Unmarshal(raw["envelope"], &env); err != nil {
		return out, env, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%s: result without envelope: %v", tool, err))
	}
	if err := json.Unmarshal(raw[field], &out); err != nil {
		return out, env, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%s: decode %s: %v", tool, field, err))
	}
	return out, env, nil
}
