package evidence

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// newTestStore returns a store on a fresh migrated database with a random key.
func newTestStore(t testing.TB) (*Store, *pgxpool.Pool) {
	t.Helper()
	pool := testenv.Postgres(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c, err := NewAESGCM("test-1", key)
	if err != nil {
		t.Fatal(err)
	}
	var logger *zap.Logger
	if tt, ok := t.(*testing.T); ok {
		logger = zaptest.NewLogger(tt, zaptest.Level(zap.InfoLevel))
	}
	s, err := NewStore(pool, c, logger)
	if err != nil {
		t.Fatal(err)
	}
	s.SignWith(testSigner(t, WriterWorker))
	return s, pool
}

// testSigner is writer's signer over a fresh random key.
func testSigner(t testing.TB, writer string) *RowSigner {
	t.Helper()
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	s, err := ParseRowSigner(writer, "test-"+writer+"-"+fmt.Sprint(time.Now().UnixNano())+":"+base64.StdEncoding.EncodeToString(seed), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// snapshot builds a snapshot of activity n of workflow wf, as the invoker would.
func snapshot(t testing.TB, wf string, n int, data any) toolkit.Snapshot {
	t.Helper()
	out, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := toolkit.CanonicalHash(out)
	if err != nil {
		t.Fatal(err)
	}
	return toolkit.Snapshot{
		Tool: "test.echo", ToolVersion: "1.0.0", Build: "testbuild",
		Call:      toolkit.CallContext{WorkflowID: wf, RunID: "run-1", ActivityID: fmt.Sprint(n), ActivityType: "Echo", Attempt: 1},
		RequestID: "req-" + wf, CorrelationID: fmt.Sprintf("corr-%016x", n), UserID: "user-42",
		InputDigest: "sha256:" + fmt.Sprintf("%064x", n), Output: out, OutputHash: hash,
		RulesetVersion: "rules-2026.1", TTL: 5 * time.Minute, Status: toolkit.StatusOK, CreatedAt: time.Now(),
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(60*time.Second))
	t.Cleanup(cancel)
	return ctx
}
