package flowtest

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/stretchr/testify/mock"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestSpecs are every tool's spec, as the worker's registry holds them.
func TestSpecs() []toolkit.Spec {
	return append(append(commerce.Specs(), support.Specs()...), onboarding.Specs()...)
}

// ToolIn is what a fake tool receives: the call's envelope and its input
// decoded into A.
type ToolIn[A any] struct {
	Request toolkit.Request `json:"request"`
	Args    A               `json:"args"`
}

// ToolOut is a fake tool's answer: its data and the envelope it came in.
type ToolOut[T any] struct {
	Data     T                `json:"data"`
	Envelope toolkit.Response `json:"envelope"`
}

// FakeTools answers every tool of fakes (tool name → func(ctx, toolIn[A])
// (toolOut[T], error)), and support.record_approval with f.recordApproval,
// through the tool activity (serveTools). Then it records the
// search-attribute upserts. A fixture registers its activities first: the
// test environment wants them before any mock.
func (f *FakeEnv) FakeTools(fakes map[string]any) {
	fakes[support.RecordApprovalTool] = f.recordApproval
	f.serveTools(fakes)
	f.recordUpserts()
}

// serveTools answers the tool activity (Tools.CallTool) with the fakes
// (tool name → func(ctx, toolIn[A]) (toolOut[T], error)). A refusal becomes an ok=false envelope with its own
// snapshot, as the invoker answers; a retryable failure fails the attempt.
func (f *FakeEnv) serveTools(fakes map[string]any) {
	f.Env.RegisterActivity(&activities.Tools{})
	callTool := func(ctx context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
		f.Mu.Lock()
		f.ToolCalls = append(f.ToolCalls, in.Call.Tool)
		f.Mu.Unlock()
		fn := reflect.ValueOf(fakes[in.Call.Tool])
		if !fn.IsValid() {
			f.T.Errorf("no fake for tool %s", in.Call.Tool)
			return activities.CallToolResult{}, activities.ApplicationError(toolkit.Errorf(toolkit.NotFound, "no fake"))
		}
		fakeIn := reflect.New(fn.Type().In(1))
		raw, _ := json.Marshal(map[string]any{"request": in.Call.Request, "args": in.Call.Input})
		if err := json.Unmarshal(raw, fakeIn.Interface()); err != nil {
			f.T.Errorf("decode %s input: %v", in.Call.Tool, err)
		}
		out := fn.Call([]reflect.Value{reflect.ValueOf(ctx), fakeIn.Elem()})
		if err, _ := out[1].Interface().(error); err != nil {
			te := toolkit.AsError(err)
			if te.Code.Retryable() {
				return activities.CallToolResult{}, err
			}
			env := f.EnvelopeFor(in.Call.Tool, toolkit.StatusError)
			env.OK, env.Error = false, te
			return activities.CallToolResult{Envelope: env}, nil
		}
		var fields map[string]json.RawMessage
		b, _ := json.Marshal(out[0].Interface())
		_ = json.Unmarshal(b, &fields)
		var env toolkit.Response
		_ = json.Unmarshal(fields["envelope"], &env)
		env.Data = fields["data"]
		f.Mu.Lock()
		f.answers[env.SnapshotID()] = env.Data
		f.Mu.Unlock()
		return activities.CallToolResult{Envelope: env}, nil
	}
	f.Env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(callTool)
	// The quote and price steps make their calls through the same fakes.
	step := func(ctx context.Context, tool string, req toolkit.Request, input any) (toolkit.Response, error) {
		raw, err := json.Marshal(input)
		if err != nil {
			return toolkit.Response{}, err
		}
		res, err := callTool(ctx, activities.CallToolInput{Call: toolkit.ToolCall{Tool: tool, Request: req, Input: raw}})
		return res.Envelope, err
	}
	f.Env.OnActivity("Quote", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.QuoteInput) (activities.QuoteResult, error) {
			f.Mu.Lock()
			f.Steps++
			f.Mu.Unlock()
			return activities.RunQuote(ctx, in, step)
		})
	f.Env.OnActivity("Price", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.PriceInput) (activities.PriceResult, error) {
			f.Mu.Lock()
			f.Steps++
			f.Mu.Unlock()
			return activities.RunPrice(ctx, in, step)
		})
}
