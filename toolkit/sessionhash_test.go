package toolkit

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A caller's session id is a credential: the invoker's log lines name it
// by its hash only.
func TestInvokerNeverLogsTheRawSessionID(t *testing.T) {
	reg := NewRegistry(testSchemas)
	calls := 0
	if err := reg.Register(echoSpec(), echoHandler(&calls)); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	inv := NewInvoker(reg, &recordingSink{}, zap.New(core))
	req := validRequest()
	req.SessionID = "sess_9f2c41d7e0b84a55"
	if _, err := inv.Invoke(context.Background(), "test.echo", req, map[string]any{"country": "DE", "quantity": 1}); err != nil {
		t.Fatal(err)
	}
	if logs.Len() < 2 {
		t.Fatalf("%d log lines, want the call's two", logs.Len())
	}
	for _, e := range logs.All() {
		for k, v := range e.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, req.SessionID) {
				t.Fatalf("log %q field %s holds the raw session id", e.Message, k)
			}
		}
		if e.ContextMap()["session_hash"] != SessionHash(req.SessionID) {
			t.Fatalf("log %q: session_hash %v", e.Message, e.ContextMap()["session_hash"])
		}
	}
}
