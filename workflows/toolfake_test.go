package workflows

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// testSpecs are every tool's spec, as the worker's registry holds them.
func testSpecs() []toolkit.Spec {
	return append(append(commerce.Specs(), support.Specs()...), onboarding.Specs()...)
}

// registerWorkflows registers every workflow, bound to testSpecs.
func (f *fakeEnv) registerWorkflows() { Register(f.env, testSpecs()) }

// useLegacyActivities replays the run as one recorded before the tool
// activity and compliance-by-mode changes: the per-tool activities, in the
// old order.
func (f *fakeEnv) useLegacyActivities() {
	f.env.OnGetVersion(changeLocalTools, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	f.env.OnGetVersion(changeToolActivity, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	f.env.OnGetVersion(changeComplianceMode, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
}

// bothPaths runs test on the current path and on the legacy one.
func bothPaths(t *testing.T, test func(t *testing.T, legacy bool)) {
	t.Run("tool_activity", func(t *testing.T) { test(t, false) })
	t.Run("per_tool_activities", func(t *testing.T) { test(t, true) })
}

// checkPath asserts which activities the run used: only the tool activity
// on the current path, none of it on the legacy one.
func (f *fakeEnv) checkPath(t *testing.T, legacy bool) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	perTool := 0
	for _, calls := range f.calls {
		perTool += len(calls)
	}
	switch {
	case legacy && len(f.toolCalls) != 0:
		t.Fatalf("a legacy run called the tool activity: %v", f.toolCalls)
	case !legacy && len(f.toolCalls) != perTool:
		t.Fatalf("%d tool activity calls for %d tool calls: some went to a per-tool activity", len(f.toolCalls), perTool)
	}
}

// fakeTools answers every tool of fakes (tool name → func(ctx, XInput)
// (XResult, error)), and support.record_approval with f.recordApproval,
// on both paths: the per-tool activity runs recorded before the tool
// activity call, and the tool activity itself (serveTools). Then it
// records the search-attribute upserts. A fixture registers its
// activities first: the test environment wants them before any mock.
func (f *fakeEnv) fakeTools(fakes map[string]any) {
	fakes[support.RecordApprovalTool] = f.recordApproval
	for tool, fn := range fakes {
		la, ok := activities.LegacyActivityOf(tool)
		if !ok {
			f.t.Fatalf("tool %s has no per-tool activity to fake", tool)
		}
		f.env.OnActivity(la.Name, mock.Anything, mock.Anything).Return(fn)
	}
	f.serveTools(fakes)
	f.recordUpserts()
}

// serveTools answers the tool activity (Tools.CallTool) with the per-tool
// fakes (tool name → func(ctx, XInput) (XResult, error)), so one fake
// serves both paths. A refusal becomes an ok=false envelope with its own
// snapshot, as the invoker answers; a retryable failure fails the attempt.
func (f *fakeEnv) serveTools(fakes map[string]any) {
	f.env.RegisterActivity(&activities.Tools{})
	callTool := func(ctx context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
		f.mu.Lock()
		f.toolCalls = append(f.toolCalls, in.Call.Tool)
		f.mu.Unlock()
		fn := reflect.ValueOf(fakes[in.Call.Tool])
		if !fn.IsValid() {
			f.t.Errorf("no fake for tool %s", in.Call.Tool)
			return activities.CallToolResult{}, activities.ApplicationError(toolkit.Errorf(toolkit.NotFound, "no fake"))
		}
		legacyIn := reflect.New(fn.Type().In(1))
		raw, _ := json.Marshal(map[string]any{"request": in.Call.Request, "args": in.Call.Input})
		if err := json.Unmarshal(raw, legacyIn.Interface()); err != nil {
			f.t.Errorf("decode %s input: %v", in.Call.Tool, err)
		}
		out := fn.Call([]reflect.Value{reflect.ValueOf(ctx), legacyIn.Elem()})
		if err, _ := out[1].Interface().(error); err != nil {
			te := toolkit.AsError(err)
			if te.Code.Retryable() {
				return activities.CallToolResult{}, err
			}
			env := f.envelopeFor(in.Call.Tool, toolkit.StatusError)
			env.OK, env.Error = false, te
			return activities.CallToolResult{Envelope: env}, nil
		}
		var fields map[string]json.RawMessage
		b, _ := json.Marshal(out[0].Interface())
		_ = json.Unmarshal(b, &fields)
		var env toolkit.Response
		_ = json.Unmarshal(fields["envelope"], &env)
		la, _ := activities.LegacyActivityOf(in.Call.Tool)
		env.Data = fields[la.ResultField]
		return activities.CallToolResult{Envelope: env}, nil
	}
	f.env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			f.mu.Lock()
			f.direct = append(f.direct, in.Call.Tool)
			f.mu.Unlock()
			return callTool(ctx, in)
		})
	// A quote round (generation 2) makes its calls through the same fakes.
	f.env.OnActivity("QuoteRound", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.QuoteRoundInput) (activities.QuoteRoundResult, error) {
			f.mu.Lock()
			f.rounds++
			f.mu.Unlock()
			res, err := activities.RunQuoteRound(ctx, in, func(ctx context.Context, tool string, req toolkit.Request, raw json.RawMessage) (toolkit.Response, error) {
				res, err := callTool(ctx, activities.CallToolInput{Call: toolkit.ToolCall{Tool: tool, Request: req, Input: raw}})
				return res.Envelope, err
			})
			if f.tamperRound != nil {
				f.tamperRound(&res)
			}
			return res, err
		})
}
