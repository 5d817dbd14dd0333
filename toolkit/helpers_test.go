package toolkit

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// testSchemas is a schema folder for the pipeline tests: an echo tool whose
// input needs a two-letter country and a positive quantity.
var testSchemas = fstest.MapFS{
	"echo.input.json": {Data: []byte(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"$id": "https://cartwright.dev/schemas/test/echo.input.json",
		"type": "object", "additionalProperties": false,
		"required": ["country", "quantity"],
		"properties": {
			"country": {"type": "string", "pattern": "^[A-Z]{2}$"},
			"quantity": {"type": "integer", "minimum": 1},
			"note": {"type": "string", "maxLength": 10000}
		}}`)},
	"echo.output.json": {Data: []byte(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"$id": "https://cartwright.dev/schemas/test/echo.output.json",
		"type": "object", "required": ["country", "quantity"],
		"properties": {
			"country": {"type": "string"},
			"quantity": {"type": "integer"},
			"note": {"type": "string"}
		}}`)},
	"noid.json":     {Data: []byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}`)},
	"noschema.json": {Data: []byte(`{"$id": "https://cartwright.dev/schemas/test/noschema.json", "type": "object"}`)},
}

func echoSpec() Spec {
	return Spec{
		Name:         "test.echo",
		Version:      "1.0.0",
		Description:  "Echoes its input back. Use in tests; succeeds for any valid input; fails never.",
		InputSchema:  "echo.input.json",
		OutputSchema: "echo.output.json",
		Annotations:  Annotations{ReadOnly: true, Idempotent: true},
		TTL:          time.Minute,
		Timeout:      time.Second,
		Provider:     "test",
	}
}

func validRequest() Request {
	return Request{RequestID: "req-1", Actor: Actor{Type: ActorAgent, ID: "agent-7"}, UserID: "u_123", SessionID: "s_1"}
}

// recordingSink keeps every snapshot it is given.
type recordingSink struct {
	Unstaged
	mu    sync.Mutex
	snaps []Snapshot
}

func (s *recordingSink) RecordStep(_ context.Context, snap Snapshot) (Recorded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps = append(s.snaps, snap)
	return Recorded{SnapshotID: "ev_test" + string(rune('a'+len(s.snaps)))}, nil
}

func (s *recordingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.snaps)
}

// newTestInvoker registers h as test.echo and returns the invoker and sink.
func newTestInvoker(t *testing.T, spec Spec, h Handler) (*Invoker, *recordingSink) {
	t.Helper()
	reg := NewRegistry(testSchemas)
	if err := reg.Register(spec, h); err != nil {
		t.Fatalf("register: %v", err)
	}
	sink := &recordingSink{}
	return NewInvoker(reg, sink, nil), sink
}

func echoHandler(calls *int) Handler {
	return func(_ context.Context, c *Call) (*Output, error) {
		*calls++
		var in map[string]any
		if err := c.Bind(&in); err != nil {
			return nil, err
		}
		return &Output{Data: in}, nil
	}
}
