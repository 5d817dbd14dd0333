package audit_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

func TestOpenFromConfig(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cfg := config.Config{PostgresDSN: testenv.Database(t), EvidenceKeyID: "k1", EvidenceKey: base64.StdEncoding.EncodeToString(key),
		PayloadKeys: codectest.Spec()}
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	d, closeAll, err := audit.Open(ctxT(t), cfg, wiring.ToolSpecs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	rep, err := audit.Audit(ctxT(t), d, audit.ByID("no-such-workflow-"+testenv.TaskQueue(t), ""))
	if !errors.Is(err, audit.ErrNotFound) || audit.ExitCode(rep, err) != audit.ExitCannotRun {
		t.Fatalf("unknown workflow through Open: %v", err)
	}

	// Without a payload key ring Open refuses: it could not read an
	// encrypted history.
	if _, _, err := audit.Open(ctxT(t), config.Config{PostgresDSN: cfg.PostgresDSN, EvidenceKeyID: "k1", EvidenceKey: cfg.EvidenceKey}, wiring.ToolSpecs(), nil); err == nil {
		t.Fatal("Open without CARTWRIGHT_PAYLOAD_KEYS succeeded")
	}

	// An unreachable server is "could not run", with a clear error.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	d2, close2, err := audit.Open(ctxT(t), cfg, wiring.ToolSpecs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer close2()
	rep, err = audit.Audit(ctxT(t), d2, audit.ByID("anything", ""))
	if err == nil || audit.ExitCode(rep, err) != audit.ExitCannotRun {
		t.Fatalf("unreachable server: %v", err)
	}
	t.Logf("unreachable server: %v", err)
}
