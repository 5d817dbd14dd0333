package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func toolCallFixture() toolkit.ToolCall {
	return toolkit.ToolCall{
		Tool:    "pricing.get_realtime_quote",
		Request: toolkit.Request{RequestID: "req-unit-0001", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "a"}, UserID: "u_1"},
		Input:   json.RawMessage(`{"currency":"EUR","items":[{"sku":"TSHIRT-ORG-M-BLK","quantity":1}]}`),
	}
}

func TestToolCallRunsTheToolWithADeterministicCorrelationID(t *testing.T) {
	env := (&testsuite.WorkflowTestSuite{}).NewTestWorkflowEnvironment()
	var tools *activities.Tools
	var seen activities.CallToolInput
	env.OnActivity(tools.CallTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			seen = in
			return activities.CallToolResult{Envelope: toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: in.Call.Tool}}, nil
		})
	env.ExecuteWorkflow(ToolCall, ToolCallInput{Call: toolCallFixture()})
	var res ToolCallResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Envelope.OK || seen.Call.Tool != "pricing.get_realtime_quote" {
		t.Fatalf("result %+v, activity saw %+v", res, seen.Call)
	}
	if len(seen.Call.Request.CorrelationID) != 21 || seen.Call.Request.RequestID != "req-unit-0001" {
		t.Fatalf("envelope not completed: %+v", seen.Call.Request)
	}
}

func TestToolCallFailsWithTheToolsCode(t *testing.T) {
	env := (&testsuite.WorkflowTestSuite{}).NewTestWorkflowEnvironment()
	var tools *activities.Tools
	env.OnActivity(tools.CallTool, mock.Anything, mock.Anything).Return(activities.CallToolResult{},
		toolkit.ApplicationError(toolkit.Errorf(toolkit.OutOfStock, "only 1 left")))
	env.ExecuteWorkflow(ToolCall, ToolCallInput{Call: toolCallFixture()})
	err := env.GetWorkflowError()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != string(toolkit.OutOfStock) {
		t.Fatalf("workflow error %v, want OUT_OF_STOCK", err)
	}
}

func TestToolCallIDIsTheIdempotencyKey(t *testing.T) {
	call := toolCallFixture()
	id, err := ToolCallID(call)
	if err != nil || id != "tool-call/u_1/req-unit-0001" {
		t.Fatalf("read tool id %q %v", id, err)
	}
	call.Request.IdempotencyKey = "order-key-0001"
	if id, _ = ToolCallID(call); id != "tool-call/u_1/order-key-0001" {
		t.Fatalf("write tool id %q", id)
	}
	call.Request.UserID = "jane@example.com"
	if _, err := ToolCallID(call); err == nil {
		t.Fatal("an e-mail became part of a workflow id")
	}
}

func TestToolCallKeepsTheCallersCorrelationID(t *testing.T) {
	env := (&testsuite.WorkflowTestSuite{}).NewTestWorkflowEnvironment()
	var tools *activities.Tools
	var seen activities.CallToolInput
	env.OnActivity(tools.CallTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CallToolInput) (activities.CallToolResult, error) {
			seen = in
			return activities.CallToolResult{Envelope: toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: in.Call.Tool}}, nil
		})
	call := toolCallFixture()
	call.Request.CorrelationID = "corr-0123456789abcdef"
	env.ExecuteWorkflow(ToolCall, ToolCallInput{Call: call})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if seen.Call.Request.CorrelationID != "corr-0123456789abcdef" {
		t.Fatalf("correlation id %q, want the caller's", seen.Call.Request.CorrelationID)
	}
}
