package scaletest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

// auditDeps audits with the bench's client and evidence store.
func auditDeps(t *testing.T, b *benchStack) audit.Deps {
	t.Helper()
	return audit.Deps{Temporal: b.cl.Temporal(), Evidence: auditorStore(t, b), Specs: wiring.ToolSpecs()}
}

// auditorStore reads the bench's evidence as an auditor does: it opens
// the payloads with the evidence key and verifies the rows' signatures
// with the worker's and the gateway's public rings only (workerEnv,
// startGateway; docs/evidence.md#row-signatures).
func auditorStore(t *testing.T, b *benchStack) *evidence.Store {
	t.Helper()
	sealer, err := evidence.NewAESGCMFromBase64(evidencetest.KeyID, evidencetest.Key())
	if err != nil {
		t.Fatal(err)
	}
	store, err := evidence.NewStore(b.pool, sealer, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := evidence.ParseRowKeys(evidencetest.WorkerPublicRing, evidencetest.GatewayPublicRing)
	if err != nil {
		t.Fatal(err)
	}
	store.VerifyWith(keys)
	return store
}

// auditRun audits every draft order of the bench's task queue (a written
// draft's run still holds it: running histories are audited too),
// as `starter audit --query` does, and requires each CLEAN and at least
// least of them. It says how many it audited, how long that took, and the
// CPU per history (ms) of this process (the auditor) and of each server.
func auditRun(ctx context.Context, t *testing.T, b *benchStack, least int) (int, time.Duration, map[string]float64) {
	t.Helper()
	query := fmt.Sprintf(`WorkflowType = "DraftOrder" AND TaskQueue = %q`, b.tq)
	by, self := serverCPUBy(), procCPU(os.Getpid())
	began := time.Now()
	m, err := audit.AuditMany(ctx, auditDeps(t, b), query)
	took := time.Since(began)
	cpu := perOrderBy(by, serverCPUBy(), m.Audited)
	cpu["auditor"] = perOrder(procCPU(os.Getpid())-self, m.Audited)
	if err != nil {
		t.Fatal(err)
	}
	if m.ExitCode() != audit.ExitClean || m.Audited < least {
		for _, rep := range m.Reports {
			if !rep.Clean {
				var buf bytes.Buffer
				_ = rep.WriteText(&buf)
				t.Errorf("not clean:\n%s", buf.String())
				break
			}
		}
		t.Fatalf("audit of the run: %d audited (want ≥ %d), %d clean, %d with findings, %d failed %v",
			m.Audited, least, m.Clean, m.WithFindings, m.Failed, m.Errors)
	}
	return m.Audited, took, cpu
}

// killDuringLoad drives l.orders draft orders, l.concurrency at a time,
// SIGKILLs the worker once a third are done (orders in flight, local
// activities running in it), starts a new worker process in its place, and
// checks the outcome: every order completed, one draft-order row each, no
// step with two evidence snapshots, every chain unbroken and every run
// audited CLEAN.
func killDuringLoad(ctx context.Context, t *testing.T, b *benchStack, l load) {
	t.Helper()
	var before int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	orders := driveOrders(ctx, b.cl, l)
	orders.waitDone(ctx, t, l.orders/3)
	inFlight := orders.started.Load() - orders.done.Load()
	if inFlight == 0 {
		t.Fatal("no order in flight at the kill: raise the order count")
	}
	t.Logf("SIGKILL worker %s with %d orders done, %d in flight", b.worker.name, orders.done.Load(), inFlight)
	b.worker.kill(t)
	b.worker = startWorker(t, "restarted", "workflows,activities", b.env)
	b.worker.waitReady(t, 2*time.Minute)
	orders.wg.Wait()
	if err := orders.err(); err != nil {
		t.Fatal(err)
	}
	var rows, keys int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) - $1, count(DISTINCT idempotency_key) - $1 FROM draft_orders`, before).
		Scan(&rows, &keys); err != nil {
		t.Fatal(err)
	}
	if rows != l.orders || keys != l.orders {
		t.Fatalf("draft_orders: %d new rows for %d new keys, want %d each", rows, keys, l.orders)
	}
	checkEvidence(ctx, t, b.pool, b.cl, orders.ids())
	t.Logf("worker killed with %d orders in flight: %d orders completed on its successor, one draft order each, audits CLEAN",
		inFlight, l.orders)
}

// TestWorkerKilledAndRestarted is the short form of the bench's kill
// round, on the shared test server: one worker process, SIGKILLed with
// orders in flight at 16, a new one started in its place.
func TestWorkerKilledAndRestarted(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(10*time.Minute))
	defer cancel()
	b := startBenchStack(ctx, t)
	killDuringLoad(ctx, t, b, load{orders: 32, concurrency: 16})
}
