package toolkit_test

import (
	"context"
	"fmt"
	"sync"
	"testing/fstest"
	"time"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// memoryEvidence keeps snapshots in memory: enough for an example or a
// unit test of a tool. Production workers use the PostgreSQL store
// (package evidence), which also chains and encrypts them.
type memoryEvidence struct {
	toolkit.Unstaged // writes every snapshot at once
	mu               sync.Mutex
	snaps            []toolkit.Snapshot
}

func (m *memoryEvidence) RecordStep(_ context.Context, s toolkit.Snapshot) (toolkit.Recorded, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snaps = append(m.snaps, s)
	return toolkit.Recorded{SnapshotID: fmt.Sprintf("ev_example_%d", len(m.snaps))}, nil
}

// Define a tool (its spec, its two JSON Schemas and a handler), register
// it, and invoke it through the invoker: the input is checked against the
// schema before the handler runs, the output after, and every answer —
// a refusal too — is an envelope with its evidence snapshot.
func Example() {
	// The schemas normally come from the embedded schemas/ folder
	// (schemas.FS); any fs.FS will do.
	schemas := fstest.MapFS{
		"greeting.say_hello.input.json": {Data: []byte(`{
			"$schema": "http://json-schema.org/draft-07/schema#", "$id": "greeting.say_hello.input.json",
			"type": "object", "additionalProperties": false, "required": ["name"],
			"properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40}}}`)},
		"greeting.say_hello.output.json": {Data: []byte(`{
			"$schema": "http://json-schema.org/draft-07/schema#", "$id": "greeting.say_hello.output.json",
			"type": "object", "additionalProperties": false, "required": ["greeting"],
			"properties": {"greeting": {"type": "string"}}}`)},
	}
	spec := toolkit.Spec{
		Name:    "greeting.say_hello",
		Version: "1.0.0",
		Description: "Greets a person by name. Use it to check the tool pipeline end to end; " +
			"it succeeds for any non-empty name and fails with INVALID_ARGUMENT otherwise.",
		InputSchema:  "greeting.say_hello.input.json",
		OutputSchema: "greeting.say_hello.output.json",
		Annotations:  toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:          time.Minute,
		Timeout:      time.Second,
		Retry:        toolkit.RetryPolicy{MaxAttempts: 3, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second},
	}
	hello := func(_ context.Context, call *toolkit.Call) (*toolkit.Output, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := call.Bind(&in); err != nil {
			return nil, err
		}
		return &toolkit.Output{Data: map[string]string{"greeting": "Hello, " + in.Name + "!"}}, nil
	}

	reg := toolkit.NewRegistry(schemas)
	if err := reg.Register(spec, hello); err != nil {
		fmt.Println("register:", err)
		return
	}
	evidence := &memoryEvidence{}
	inv := toolkit.NewInvoker(reg, evidence, zap.NewNop())
	req := toolkit.Request{RequestID: "req-example-1", UserID: "u_123",
		Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}}

	resp, err := inv.Invoke(context.Background(), "greeting.say_hello", req, map[string]string{"name": "Ada"})
	fmt.Println(resp.OK, resp.Status, string(resp.Data), resp.SnapshotID(), err)

	// Input the schema refuses never reaches the handler: the answer is an
	// INVALID_ARGUMENT envelope naming the field, evidenced like any answer.
	resp, err = inv.Invoke(context.Background(), "greeting.say_hello", req, map[string]string{"name": ""})
	fmt.Println(resp.OK, resp.Status, toolkit.CodeOf(err), resp.Error.Details["fields"], resp.SnapshotID())

	// Each snapshot holds the canonical hash of what the envelope answered.
	hash, _ := toolkit.OutputHash(evidence.snaps[0].Output)
	fmt.Println(len(evidence.snaps), hash == evidence.snaps[0].OutputHash)
	// Output:
	// true ok {"greeting":"Hello, Ada!"} ev_example_1 <nil>
	// false error INVALID_ARGUMENT [name: String length must be greater than or equal to 1] ev_example_2
	// 2 true
}
