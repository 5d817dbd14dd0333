package evidence

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// testTool is a tool that exists only in tests: it answers with whatever
// the handler returns, through the real registry and invoker.
const testTool = "test.lookup"

var testSchemas = fstest.MapFS{
	"test.lookup.input.json": {Data: []byte(`{"$schema":"http://json-schema.org/draft-07/schema#",
		"$id":"https://cartwright.dev/schemas/test.lookup.input.json","type":"object",
		"properties":{"n":{"type":"integer"},"email":{"type":"string"}},"additionalProperties":false}`)},
	"test.lookup.output.json": {Data: []byte(`{"$schema":"http://json-schema.org/draft-07/schema#",
		"$id":"https://cartwright.dev/schemas/test.lookup.output.json","type":"object"}`)},
}

// testInvoker registers testTool with handler on a fresh registry and
// returns an invoker recording into sink.
func testInvoker(t testing.TB, sink toolkit.EvidenceSink, handler toolkit.Handler) *toolkit.Invoker {
	t.Helper()
	reg := toolkit.NewRegistry(testSchemas)
	err := reg.Register(toolkit.Spec{
		Name: testTool, Version: "0.1.0",
		Description: "Test-only lookup: answers with a fixed record; succeeds always; fails only when the store does.",
		InputSchema: "test.lookup.input.json", OutputSchema: "test.lookup.output.json",
		Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:         time.Minute, Timeout: 10 * time.Second, EvidenceRequired: true, Provider: "test",
	}, handler)
	if err != nil {
		t.Fatal(err)
	}
	return toolkit.NewInvoker(reg, sink, nil)
}

func fixedAnswer(data map[string]any) toolkit.Handler {
	return func(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
		return &toolkit.Output{Data: data, RulesetVersion: "test-rules-1"}, nil
	}
}

func testRequest(id string) toolkit.Request {
	return toolkit.Request{RequestID: id, Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "evidence-test"}, UserID: "user-test"}
}
