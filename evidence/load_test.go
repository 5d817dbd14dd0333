package evidence

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// TestAppendLoad is a short load test of RecordStep against the real
// PostgreSQL (a draft order writes six snapshots): appends from
// 16 goroutines over 200 chains, then reports appends/s, the CPU the
// serving backends spent per append (utime+stime from /proc/<pid>/stat of
// the pool's own backends, so other users of a shared server do not count)
// and this process's CPU per append. It runs only when
// CARTWRIGHT_EVIDENCE_LOAD is set (to the number of appends, default 2000):
// it measures, it does not belong in every test run.
func TestAppendLoad(t *testing.T) {
	v, ok := os.LookupEnv("CARTWRIGHT_EVIDENCE_LOAD")
	if !ok {
		t.Skip("load test: set CARTWRIGHT_EVIDENCE_LOAD=<appends> to run it")
	}
	appends, _ := strconv.Atoi(v)
	if appends <= 0 {
		appends = 2000
	}
	const workers, chains = 16, 200
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(5*time.Minute))
	defer cancel()
	pool, err := db.Open(ctx, testenv.Database(t), db.MaxConns(workers))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c, _ := NewAESGCM("load-1", key)
	s, _ := NewStore(pool, c, nil)
	s.SignWith(testSigner(t, WriterWorker))
	pids := backendPIDs(ctx, t, pool, workers)
	payload := map[string]any{"quote_id": "q_123", "total_minor": 125000, "currency": "EUR",
		"lines": []map[string]any{{"sku": "A-1", "qty": 2, "unit_minor": 50000}, {"sku": "B-2", "qty": 1, "unit_minor": 25000}}}

	// CARTWRIGHT_EVIDENCE_LOAD_MODES=definer,invoker,definer,invoker
	// alternates the append as the migrations define it (SECURITY
	// DEFINER, a pinned search_path) with a SECURITY INVOKER append the
	// runtime role is granted the tables for: what the definer costs
	// (docs/performance.md#what-a-draft-order-adds-to-its-protocol).
	modes := strings.Split(os.Getenv("CARTWRIGHT_EVIDENCE_LOAD_MODES"), ",")
	if modes[0] == "" {
		modes = []string{"definer"}
	}
	total := 0
	for round, mode := range modes {
		securityMode(t, pool, mode)
		pgBefore, selfBefore, start := cpuTicks(t, pids), selfCPU(), time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= appends {
						return
					}
					n := total + i
					snap := snapshot(t, fmt.Sprintf("load-%03d", n%chains), n/chains+1, payload)
					if _, err := s.RecordStep(ctx, snap); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed, pgCPU, self := time.Since(start), ticksToDuration(cpuTicks(t, pids)-pgBefore), selfCPU()-selfBefore
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		total += appends
		t.Logf("round %d (%s): %d appends, %d goroutines, %d chains: %.0f appends/s; postgres backends %.0f µs CPU/append; this process %.0f µs CPU/append",
			round+1, mode, appends, workers, chains, float64(appends)/elapsed.Seconds(),
			float64(pgCPU.Microseconds())/float64(appends), float64(self.Microseconds())/float64(appends))
	}
	securityMode(t, pool, "definer")
	appends = total

	for ch := 0; ch < chains && ch < appends; ch++ {
		wf := fmt.Sprintf("load-%03d", ch)
		rep, err := s.Verify(ctx, wf)
		if want := (appends - ch + chains - 1) / chains; err != nil || !rep.OK || rep.Rows != want {
			t.Fatalf("chain %s after the load: %+v %v (want %d rows)", wf, rep, err, want)
		}
	}
}

// backendPIDs opens n connections in the pool and returns their server pids.
func backendPIDs(ctx context.Context, t *testing.T, pool *pgxpool.Pool, n int) []int {
	t.Helper()
	var conns []*pgxpool.Conn
	var pids []int
	for i := 0; i < n; i++ {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		conns, pids = append(conns, conn), append(pids, pid)
	}
	for _, c := range conns {
		c.Release()
	}
	return pids
}

// cpuTicks sums utime+stime (clock ticks) of the given processes.
func cpuTicks(t *testing.T, pids []int) int64 {
	t.Helper()
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("read the backend's CPU (the database must run on this machine): %v", err)
		}
		// Fields after the parenthesised command name: state is field 3,
		// utime 14 and stime 15 (proc(5)).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + s
	}
	return sum
}

// ticksToDuration converts clock ticks (USER_HZ, 100 on Linux) to time.
func ticksToDuration(ticks int64) time.Duration { return time.Duration(ticks) * 10 * time.Millisecond }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// appendSignature is evidence_append_row's argument list (migration 00190).
const appendSignature = `evidence_append_row(integer, jsonb)`

// securityMode makes evidence_append_row run as its owner (definer: the
// migrations' way) or as its caller with the grants that needs (invoker).
func securityMode(t *testing.T, pool *pgxpool.Pool, mode string) {
	t.Helper()
	switch mode {
	case "definer":
		testenv.AdminExec(t, pool, `REVOKE INSERT, UPDATE ON evidence_snapshots, evidence_chain_heads FROM cartwright_runtime;
			ALTER FUNCTION `+appendSignature+` SECURITY DEFINER SET search_path = public, pg_temp`)
	case "invoker":
		testenv.AdminExec(t, pool, `GRANT INSERT ON evidence_snapshots TO cartwright_runtime;
			GRANT INSERT, UPDATE ON evidence_chain_heads TO cartwright_runtime;
			ALTER FUNCTION `+appendSignature+` SECURITY INVOKER RESET search_path`)
	case "definer-unpinned": // to tell the definer's cost from its SET clause's
		testenv.AdminExec(t, pool, `REVOKE INSERT, UPDATE ON evidence_snapshots, evidence_chain_heads FROM cartwright_runtime;
			ALTER FUNCTION `+appendSignature+` SECURITY DEFINER RESET search_path`)
	default:
		t.Fatalf("CARTWRIGHT_EVIDENCE_LOAD_MODES: %q is not definer, definer-unpinned or invoker", mode)
	}
}
