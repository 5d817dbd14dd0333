package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

func toolCallFixture() toolkit.ToolCall {
	return toolkit.ToolCall{
		Tool:    "pricing.get_realtime_quote",
		Request: toolkit.Request{RequestID: "req-unit-0001", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "a"}, UserID: "u_1"},
		Input:   json.RawMessage(`{"currency":"EUR","items":[{"sku":"TSHIRT-ORG-M-BLK","quantity":1}]}`),
	}
}

// toolCallEnv is a test environment serving the tool call bound to testSpecs.
func toolCallEnv() *testsuite.TestWorkflowEnvironment {
	env := (&testsuite.WorkflowTestSuite{}).NewTestWorkflowEnvironment()
	specs := flow.NewToolSpecs(flowtest.TestSpecs())
	env.RegisterWorkflowWithOptions(Flow{Specs: specs}.Run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterWorkflowWithOptions(ListTools, workflow.RegisterOptions{Name: ListToolsWorkflowName})
	env.RegisterActivity(&activities.Tools{})
	return env
}

func runToolCall(t *testing.T, env *testsuite.TestWorkflowEnvironment, call toolkit.ToolCall) toolkit.Response {
	t.Helper()
	env.ExecuteWorkflow(WorkflowName, Input{Call: call})
	if err := env.GetWorkflowError(); err != nil {
		// A run that gave its key back fails with its envelope in the
		// details (docs/envelope.md#idempotency).
		var app *temporal.ApplicationError
		var res Result
		if errors.As(err, &app) && app.Type() == ReleasedKeyType && app.Details(&res) == nil {
			return res.Envelope
		}
		t.Fatalf("the tool call failed instead of answering with an envelope: %v", err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res.Envelope
}

func TestToolCallRunsTheToolWithADeterministicCorrelationID(t *testing.T) {
	env := toolCallEnv()
	var seen activities.CallToolInput
	env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			seen = in
			return activities.CallToolResult{Envelope: toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: in.Call.Tool}}, nil
		})
	res := runToolCall(t, env, toolCallFixture())
	if !res.OK || seen.Call.Tool != "pricing.get_realtime_quote" {
		t.Fatalf("result %+v, activity saw %+v", res, seen.Call)
	}
	if len(seen.Call.Request.CorrelationID) != 21 || seen.Call.Request.RequestID != "req-unit-0001" {
		t.Fatalf("envelope not completed: %+v", seen.Call.Request)
	}
}

// TestRefusalIsAnEnvelopeResult: a business refusal is the tool call
// workflow's result, an ok=false envelope with the code, the recovery
// fields and the refusal's evidence, not a failed workflow.
func TestRefusalIsAnEnvelopeResult(t *testing.T) {
	env := toolCallEnv()
	refusal := toolkit.Errorf(toolkit.OutOfStock, "only 1 left").WithRecovery("lower the quantity", "pricing.get_realtime_quote")
	env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(activities.CallToolResult{Envelope: toolkit.Response{
		OK: false, Status: toolkit.StatusError, Tool: "pricing.get_realtime_quote", Version: "1.0.0", Error: refusal,
		Evidence: &toolkit.Evidence{SnapshotID: "ev_refusal"}}}, nil)
	res := runToolCall(t, env, toolCallFixture())
	if res.OK || res.Status != toolkit.StatusError || res.Error == nil || res.Error.Code != toolkit.OutOfStock ||
		res.Error.RecoverySuggestion == "" || res.Error.CanRetry || res.SnapshotID() != "ev_refusal" {
		t.Fatalf("refusal envelope = %+v (error %+v)", res, res.Error)
	}
}

// TestFailureAfterRetriesIsAnEnvelope: an infrastructure failure
// that outlived its retries, and a call of a tool without a spec, also end
// as error envelopes.
func TestFailureAfterRetriesIsAnEnvelope(t *testing.T) {
	env := toolCallEnv()
	env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(activities.CallToolResult{},
		activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "database down")))
	res := runToolCall(t, env, toolCallFixture())
	if res.OK || res.Status != toolkit.StatusError || res.Error == nil || res.Error.Code != toolkit.UpstreamError || !res.Error.CanRetry ||
		res.Tool != "pricing.get_realtime_quote" || res.Version == "" {
		t.Fatalf("failure envelope = %+v (error %+v)", res, res.Error)
	}

	env = toolCallEnv()
	call := toolCallFixture()
	call.Tool = "pricing.no_such_tool"
	res = runToolCall(t, env, call)
	if res.OK || res.Error == nil || res.Error.Code != toolkit.NotFound {
		t.Fatalf("unknown tool envelope = %+v (error %+v)", res, res.Error)
	}
}

func TestIDIsTheIdempotencyKey(t *testing.T) {
	call := toolCallFixture()
	id, err := ID(call)
	if err != nil || id != "tool-call/u_1/req-unit-0001" {
		t.Fatalf("read tool id %q %v", id, err)
	}
	call.Request.IdempotencyKey = "order-key-0001"
	if id, _ = ID(call); id != "tool-call/u_1/order-key-0001" {
		t.Fatalf("write tool id %q", id)
	}
	call.Request.UserID = "jane@example.com"
	if _, err := ID(call); err == nil {
		t.Fatal("an e-mail became part of a workflow id")
	}
}

func TestToolCallKeepsTheCallersCorrelationID(t *testing.T) {
	env := toolCallEnv()
	var seen activities.CallToolInput
	env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			seen = in
			return activities.CallToolResult{Envelope: toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: in.Call.Tool}}, nil
		})
	call := toolCallFixture()
	call.Request.CorrelationID = "corr-0123456789abcdef"
	runToolCall(t, env, call)
	if seen.Call.Request.CorrelationID != "corr-0123456789abcdef" {
		t.Fatalf("correlation id %q, want the caller's", seen.Call.Request.CorrelationID)
	}
}

// TestToolCallGivesBackTheKeyOfAnAnswerNotKept (docs/envelope.md#idempotency):
// a retryable failure and a refused input end the run failed, with the
// envelope in the failure's details, so the reuse policy frees the key; a
// business refusal (OUT_OF_STOCK) is an answer and completes the run.
func TestToolCallGivesBackTheKeyOfAnAnswerNotKept(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      *toolkit.Error
		released bool
	}{
		{"outage", toolkit.Errorf(toolkit.UpstreamError, "stripe down"), true},
		{"refused input", toolkit.Errorf(toolkit.InvalidArgument, "quantity must be at least 1"), true},
		{"business refusal", toolkit.Errorf(toolkit.OutOfStock, "only 1 left"), false},
	} {
		env := toolCallEnv()
		env.OnActivity("CallTool", mock.Anything, mock.Anything).Return(activities.CallToolResult{Envelope: toolkit.Response{
			OK: false, Status: toolkit.StatusError, Tool: "pricing.get_realtime_quote", Error: tc.err}}, nil)
		env.ExecuteWorkflow(WorkflowName, Input{Call: toolCallFixture()})
		err := env.GetWorkflowError()
		var app *temporal.ApplicationError
		released := errors.As(err, &app) && app.Type() == ReleasedKeyType
		if released != tc.released {
			t.Fatalf("%s: released=%v (%v), want %v", tc.name, released, err, tc.released)
		}
		var res Result
		if released {
			if app.Details(&res) != nil {
				t.Fatalf("%s: no envelope in the failure", tc.name)
			}
		} else if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		if res.Envelope.Error == nil || res.Envelope.Error.Code != tc.err.Code {
			t.Fatalf("%s: envelope %+v", tc.name, res.Envelope)
		}
	}
}
