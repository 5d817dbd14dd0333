package stripetools

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

const testKey = "sk_test_51FakeKeyForCartwrightTests0000"

// captureSink keeps every snapshot the invoker records.
type captureSink struct {
	toolkit.Unstaged
	mu    sync.Mutex
	snaps []toolkit.Snapshot
}

func (s *captureSink) RecordStep(_ context.Context, snap toolkit.Snapshot) (toolkit.Recorded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps = append(s.snaps, snap)
	return toolkit.Recorded{SnapshotID: "ev_test" + string(rune('A'+len(s.snaps)))}, nil
}

func (s *captureSink) all() []toolkit.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]toolkit.Snapshot(nil), s.snaps...)
}

type rig struct {
	client *Client
	inv    *toolkit.Invoker
	sink   *captureSink
	logs   *observer.ObservedLogs
}

// newRig builds a client on base and an invoker with every tool, logging
// at debug level into an observer with no redaction in between: what the
// observer sees is what our code handed to the logger.
func newRig(t *testing.T, base string, mod ...func(*Config)) *rig {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(core)
	cfg := Config{
		SecretKey: testKey, APIBase: base,
		ReturnURL: "https://shop.example/onboarding/return", RefreshURL: "https://shop.example/onboarding/refresh",
		Logger: logger,
	}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, c); err != nil {
		t.Fatal(err)
	}
	sink := &captureSink{}
	return &rig{client: c, inv: toolkit.NewInvoker(reg, sink, logger), sink: sink, logs: logs}
}

func request(key string) toolkit.Request {
	return toolkit.Request{RequestID: "req-test-1", Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "onboarding-test"},
		UserID: "u_test", IdempotencyKey: key}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	t.Cleanup(cancel)
	return ctx
}
