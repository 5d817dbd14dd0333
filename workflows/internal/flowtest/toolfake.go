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
		return activities.CallToolResult{Envelope: env}, nil
	}
	f.Env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			f.Mu.Lock()
			f.Direct = append(f.Direct, in.Call.Tool)
			f.Mu.Unlock()
			return callTool(ctx, in)
		})
	// A quote round makes its calls through the same fakes.
	f.Env.OnActivity("QuoteRound", mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.QuoteRoundInput) (activities.QuoteRoundResult, error) {
			f.Mu.Lock()
			f.Rounds++
			f.Mu.Unlock()
			res, err := activities.RunQuoteRound(ctx, in, func(ctx context.Context, tool string, req toolkit.Request, raw json.RawMessage) (toolkit.Response, error) {
				res, err := callTool(ctx, activities.CallToolInput{Call: toolkit.ToolCall{Tool: tool, Request: req, Input: raw}})
				return res.Envelope, err
			})
			if f.TamperRound != nil {
				f.TamperRound(&res)
			}
			return res, err
		})
}
