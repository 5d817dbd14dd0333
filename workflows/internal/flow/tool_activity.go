package flow

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Call is one tool call made by workflow code.
type Call struct {
	// Tool is the dotted tool name; its spec gives the activity options.
	Tool string
	// Req is the request envelope (correlation id already set).
	Req toolkit.Request
	// Args is the tool's input.
	Args any
	// Summary is what the Web UI shows for the activity.
	Summary string
	// Wrap, if set, runs the activity's start (a draft order re-runs a call
	// that failed on infrastructure: outlive); nil starts it once.
	Wrap Wrap
	// InWorker marks a draft order's call: a tool in_worker.go lists makes
	// its first attempt in the worker (LocalFirst).
	InWorker bool
	// Handover, if set, runs before a local-first call (runsLocalFirst)
	// hands over to its regular activity.
	Handover func(ctx workflow.Context) error
	// FailRefusal makes a refusal a failed activity (never retried) rather
	// than a completed one, so the Web UI shows it red: a refused staff
	// decision (activities.CallToolInput.FailRefusal). Get answers the
	// same either way.
	FailRefusal bool
}

// Wrap runs an activity's start, for example again after an outage.
type Wrap func(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future

// run starts the activity through c.wrap, if any.
func (c Call) run(ctx workflow.Context, start func(workflow.Context) workflow.Future) workflow.Future {
	if c.Wrap == nil {
		return start(ctx)
	}
	return c.Wrap(ctx, start)
}

// Future is a tool call under way; Get returns its typed answer.
type Future[T any] struct {
	f    workflow.Future
	tool string
}

// CallTool starts one tool call with the activity options of the tool's
// spec: the one tool activity Tools.CallTool, its first attempt in the
// worker for a draft order's write (runsLocalFirst). A tool without a
// spec is a failed future (NOT_FOUND), never a call on made-up options.
func CallTool[T any](ctx workflow.Context, specs ToolSpecs, c Call) Future[T] {
	spec, err := specs.Get(c.Tool)
	if err != nil {
		f, set := workflow.NewFuture(ctx)
		set.SetError(activities.ApplicationError(err))
		return Future[T]{f: f, tool: c.Tool}
	}
	// encoding/json is deterministic; workflowcheck only sees reflection
	// reaching the runtime's stack walker and GC.
	//workflowcheck:ignore
	raw, err := json.Marshal(c.Args)
	if err != nil {
		f, set := workflow.NewFuture(ctx)
		set.SetError(activities.ApplicationError(toolkit.Errorf(toolkit.InvalidArgument, "input of %s is not JSON: %v", c.Tool, err)))
		return Future[T]{f: f, tool: c.Tool}
	}
	var tools *activities.Tools
	in := activities.CallToolInput{Call: toolkit.ToolCall{Tool: c.Tool, Request: c.Req, Input: raw}, FailRefusal: c.FailRefusal}
	first := runsLocalFirst(c, spec)
	f := c.run(ctx, func(ctx workflow.Context) workflow.Future {
		if first {
			return LocalFirst(ctx, spec, c, in)
		}
		return workflow.ExecuteActivity(ToolOptions(ctx, spec, c.Summary), tools.CallTool, in)
	})
	return Future[T]{f: f, tool: c.Tool}
}

// Get waits for the answer: the data decoded into T and the envelope. A
// refusal is the error of its code (an ApplicationError), with its
// envelope — whose evidence names the refusal's snapshot — still returned.
func (t Future[T]) Get(ctx workflow.Context) (T, toolkit.Response, error) {
	var out T
	var res activities.CallToolResult
	if err := t.f.Get(ctx, &res); err != nil {
		// A refusal as a failed activity (Call.FailRefusal) is the same
		// answer as a refusal as a result.
		if env, ok := activities.RefusalOf(err); ok {
			return out, env, activities.ApplicationError(env.Error)
		}
		return out, toolkit.Response{}, err
	}
	out, err := Decode[T](t.tool, res.Envelope)
	return out, res.Envelope, err
}

// Decode reads tool's answer env: its data decoded into T, or a refusal
// as the error of its code (an ApplicationError).
func Decode[T any](tool string, env toolkit.Response) (T, error) {
	var out T
	if !env.OK {
		te := env.Error
		if te == nil {
			te = toolkit.Errorf(toolkit.UpstreamError, "tool %s answered ok=false without an error", tool)
		}
		return out, activities.ApplicationError(te)
	}
	//workflowcheck:ignore
	if err := env.Decode(&out); err != nil {
		return out, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%v", err))
	}
	return out, nil
}
