package audit_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// TestAuditManyRate measures audit.AuditMany over draft orders driven as
// the Go client drives them (docs/performance.md#audit-rate). It runs only
// when CARTWRIGHT_AUDIT_RATE names how many orders to make (e.g. 300):
//
//	CARTWRIGHT_AUDIT_RATE=300 TEST_PKGS=./audit/ GOTEST_FLAGS='-run TestAuditManyRate -v' scripts/test.sh integration
//
// CARTWRIGHT_AUDIT_RATE_ROUNDS (3) audits of the same runs are timed;
// CARTWRIGHT_AUDIT_RATE_PROFILE=FILE writes a CPU profile of the audits
// alone (the in-process worker is idle by then).
func TestAuditManyRate(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CARTWRIGHT_AUDIT_RATE"))
	if n <= 0 {
		t.Skip("set CARTWRIGHT_AUDIT_RATE=N to measure the audit over N draft orders")
	}
	rounds, _ := strconv.Atoi(os.Getenv("CARTWRIGHT_AUDIT_RATE_ROUNDS"))
	if rounds <= 0 {
		rounds = 3
	}
	s := newRealStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(20*time.Minute))
	defer cancel()
	// Each order takes its T-shirts from stock when it is written: enough
	// for any count, so none ends OUT_OF_STOCK.
	for _, q := range []string{`UPDATE catalog_stock SET on_hand = 1000000, reserved = 0 WHERE sku = $1`,
		`UPDATE catalog_warehouse_stock SET on_hand = 1000000, reserved = 0 WHERE sku = $1`} {
		if _, err := s.pool.Exec(ctx, q, tees[0].SKU); err != nil {
			t.Fatal(err)
		}
	}

	began := time.Now()
	s.driveMany(ctx, t, n, 16)
	t.Logf("%d draft orders in %.1f s", n, time.Since(began).Seconds())
	// The written drafts' runs hold their stock: the audit reads them open.
	query := fmt.Sprintf(`WorkflowType = %q AND TaskQueue = %q AND CartwrightState = %q`, draftorder.WorkflowName, s.tq, draftorder.StateHolding)
	testenv.WaitFor(t, time.Minute, "the orders listed as holding", func() (bool, error) {
		c, err := s.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		return err == nil && c.GetCount() >= int64(n), nil
	})

	if path := os.Getenv("CARTWRIGHT_AUDIT_RATE_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	// The audit's own client as the project dials one: requests to Temporal
	// not gzipped (docs/performance.md#garbage-collection-and-compression), as `starter audit`
	// and the bench audit; the test stack's clients gzip.
	deps := s.deps
	deps.Temporal = dialUncompressed(ctx, t)
	for r := 0; r < rounds; r++ {
		cpu := s.cpuNow(ctx, t)
		start := time.Now()
		m, err := audit.AuditMany(ctx, deps, query)
		took := time.Since(start)
		used := s.cpuNow(ctx, t).since(cpu)
		if err != nil {
			t.Fatal(err)
		}
		if m.Audited != n || m.ExitCode() != audit.ExitClean {
			t.Fatalf("round %d: %d audited of %d, %d clean, %d with findings, %d failed %v", r+1, m.Audited, n, m.Clean, m.WithFindings, m.Failed, m.Errors)
		}
		t.Logf("AuditMany round %d: %d histories in %.2f s = %.0f/s, all CLEAN; CPU per history: audit %.2f ms, Temporal %.2f ms, PostgreSQL %.2f ms; load %s",
			r+1, m.Audited, took.Seconds(), float64(m.Audited)/took.Seconds(),
			used.self/float64(n), used.server/float64(n), used.pg/float64(n), loadAvg())
	}
}

// dialUncompressed is clienttest.Dial without gzip.
func dialUncompressed(ctx context.Context, t *testing.T) client.Client {
	t.Helper()
	opts := client.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	tlsCfg, err := clienttest.TLSFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.ConnectionOptions.TLS, opts.ConnectionOptions.GrpcCompression = tlsCfg, &client.GrpcCompressionNone{}
	codec.Apply(&opts, codectest.Codec())
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// cpuSample is the CPU time (ms) used so far by this process, the Temporal
// dev server (CARTWRIGHT_AUDIT_RATE_SERVER_PID, else 0) and the PostgreSQL
// backends serving this test's database, read from /proc.
type cpuSample struct {
	self, server float64
	pg           map[int]float64
}

type cpuUsed struct{ self, server, pg float64 }

func (s *realStack) cpuNow(ctx context.Context, t *testing.T) cpuSample {
	t.Helper()
	c := cpuSample{self: procCPUms(os.Getpid()), pg: map[int]float64{}}
	if pid, _ := strconv.Atoi(os.Getenv("CARTWRIGHT_AUDIT_RATE_SERVER_PID")); pid > 0 {
		c.server = procCPUms(pid)
	}
	rows, err := s.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		c.pg[pid] = procCPUms(pid)
	}
	return c
}

// since is what was used from before to c; a backend that started in
// between counts from zero.
func (c cpuSample) since(before cpuSample) cpuUsed {
	u := cpuUsed{self: c.self - before.self, server: c.server - before.server}
	for pid, ms := range c.pg {
		u.pg += ms - before.pg[pid]
	}
	return u
}

// procCPUms is the user+system CPU time of pid in ms (0 if unreadable):
// fields 14 and 15 of /proc/PID/stat, in clock ticks of 10 ms.
func procCPUms(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(rest) <= 12 {
		return 0
	}
	ut, _ := strconv.ParseFloat(rest[11], 64)
	st, _ := strconv.ParseFloat(rest[12], 64)
	return (ut + st) * 10
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// driveMany makes n draft orders on the stack's task queue, inFlight at a
// time, each driven by updates as the Go client does (Update-with-Start for
// the total, the confirm update), and waits for every one to end created.
func (s *realStack) driveMany(ctx context.Context, t *testing.T, n, inFlight int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for g := 0; g < inFlight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for int(next.Add(1)) <= n && ctx.Err() == nil {
				if err := s.driveOne(ctx, orderInput(uniqueKey("rate"), tees, berlin, "EUR")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// driveOne is one user's order: the start answers with the total, the
// confirm update writes the draft order.
func (s *realStack) driveOne(ctx context.Context, in draftorder.Input) error {
	opts, err := draftorder.StartOptions(s.tq, in)
	if err != nil {
		return err
	}
	op := s.c.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, in)
	uh, err := s.c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: draftorder.UpdateNextAction,
			Args: []any{draftorder.NextActionInput{}}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return fmt.Errorf("update-with-start: %w", err)
	}
	var st draftorder.Status
	if err := uh.Get(ctx, &st); err != nil {
		return err
	}
	if st.Confirmation == nil {
		return fmt.Errorf("%s waits in %s, not for a confirmation", opts.ID, st.State)
	}
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: opts.ID, UpdateName: draftorder.UpdateConfirm,
		Args: []any{draftorder.ConfirmInput{QuoteHash: st.Confirmation.QuoteHash}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	var ans draftorder.ConfirmAnswer
	if err := h.Get(ctx, &ans); err != nil {
		return err
	}
	run, err := op.Get(ctx)
	if err != nil {
		return err
	}
	res, err := drafttest.Result(ctx, s.c, run.GetID())
	if err != nil {
		return err
	}
	if res.State != draftorder.StateDraftCreated {
		return fmt.Errorf("%s ended %s: %s", opts.ID, res.State, res.Message)
	}
	return nil
}
