package scaletest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// benchConfig is what `make bench` (scripts/test.sh bench) asks for, from
// the environment: rounds of floor and draft orders interleaved at 1 and
// 16 in flight, orders per round at each, orders per cart size, audits,
// and whether to kill the worker in a last round.
type benchConfig struct {
	rounds, n1, n16, n64, cart, audit int
	kill                              bool
	mcp                               mcpConfig
	// levels are the in-flight counts measured: 1, 16 and 64, and any more
	// CARTWRIGHT_BENCH_MORE names ("32,128": where a server saturates).
	levels []int
}

// orders is how many draft orders (and floor workflows) a round makes at
// inFlight: the configured counts at 1, 16 and 64, else as many batches
// of inFlight as 16 in flight makes.
func (c benchConfig) orders(inFlight int) int {
	switch inFlight {
	case 1:
		return c.n1
	case 16:
		return c.n16
	case 64:
		return c.n64
	}
	return c.n16 * inFlight / 16
}

func benchConfigFromEnv(t *testing.T) benchConfig {
	c := benchConfig{rounds: 2, n1: 40, n16: 200, n64: 320, cart: 10, audit: 50, kill: os.Getenv("CARTWRIGHT_BENCH_KILL") != "0",
		mcp:    mcpConfig{one: 200, many: 2000, clients: 20, keys: 20, writes: 40},
		levels: []int{1, 16, 64}}
	for _, f := range strings.Split(os.Getenv("CARTWRIGHT_BENCH_MORE"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 16 && !slices.Contains(c.levels, n) {
			c.levels = append(c.levels, n)
		}
	}
	for name, dst := range map[string]*int{
		"CARTWRIGHT_BENCH_ROUNDS": &c.rounds, "CARTWRIGHT_BENCH_N1": &c.n1, "CARTWRIGHT_BENCH_N16": &c.n16,
		"CARTWRIGHT_BENCH_N64": &c.n64, "CARTWRIGHT_BENCH_CART": &c.cart, "CARTWRIGHT_BENCH_AUDIT": &c.audit,
		"CARTWRIGHT_BENCH_MCP_ONE": &c.mcp.one, "CARTWRIGHT_BENCH_MCP_MANY": &c.mcp.many,
		"CARTWRIGHT_BENCH_MCP_CLIENTS": &c.mcp.clients, "CARTWRIGHT_BENCH_MCP_WRITES": &c.mcp.writes,
	} {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			*dst = n
		}
	}
	return c
}

// TestBenchAgainstFloor is `make bench`: against the one dev server the
// script started for it (CARTWRIGHT_TEST_TEMPORAL_ADDRESS, the stack's
// dynamic config, in memory), it runs the Temporal floor (package floor:
// no-op activities in the draft order's shape, Floor6 regular, Floor6Local
// local, served by floor/floorworker) and real
// draft orders through a worker process and the Go client, interleaved, at
// 1 and 16 in flight, then a 1-line and a 50-line cart, audits the run's
// draft orders (all CLEAN, at least CARTWRIGHT_BENCH_AUDIT of them), and
// SIGKILLs the worker during a last round at 16 in flight (a new one takes
// over; every order completes, one draft-order row each, one snapshot per
// step, audits CLEAN). It prints one table: docs/performance-log.md shows it.
// Speed goals are reported against, never asserted (a loaded machine is
// not a failing build); correctness is asserted.
func TestBenchAgainstFloor(t *testing.T) {
	if os.Getenv("CARTWRIGHT_BENCH") != "1" {
		t.Skip("`make bench` runs this (CARTWRIGHT_BENCH=1) against a dev server of its own")
	}
	testenv.Integration(t)
	cfg := benchConfigFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	loadBefore := loadAverage()

	b := startBenchStack(ctx, t)
	fb := startFloor(ctx, t)
	res := benchResult{loadBefore: loadBefore}
	// Warm the database, the caches and the sticky workflow cache.
	if _, err := runDrafts(ctx, b.cl, 5, 1, oneLine); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < cfg.rounds; r++ {
		for _, c := range cfg.levels {
			n := cfg.orders(c)
			steps := []func(){
				func() { res.add(c, runFloor(ctx, t, fb, c, n)) },
				func() {
					// The same unmeasured warm-up the floor runs before
					// each of its variants, at the same concurrency
					// (connections, caches, the sticky cache filled).
					if _, err := runDrafts(ctx, b.cl, floorWarmup(n), c, oneLine); err != nil {
						t.Fatal(err)
					}
					by, worker := serverCPUBy(), procCPU(b.worker.cmd.Process.Pid)
					d, err := runDrafts(ctx, b.cl, n, c, oneLine)
					if err != nil {
						t.Fatal(err)
					}
					d.services = perOrderBy(by, serverCPUBy(), n)
					d.serverCPU = sumOf(d.services)
					d.workerCPU = perOrder(procCPU(b.worker.cmd.Process.Pid)-worker, n)
					res.addDrafts(c, d)
				},
			}
			if r%2 == 1 { // neither side always goes first
				steps[0], steps[1] = steps[1], steps[0]
			}
			for _, s := range steps {
				settle()
				s()
			}
			t.Logf("round %d at %d in flight done (load %s)", r+1, c, loadAverage())
		}
	}

	// The cart: 1 line and 50 lines, alternating, one at a time.
	fifty := fiftyLineCart(ctx, t, b.pool)
	for i := 0; i < cfg.cart; i++ {
		for _, mk := range []func(int) draftorder.Input{oneLine, func(int) draftorder.Input {
			in := fifty
			in.Request.IdempotencyKey = "bench50-" + randomHex(6)
			in.Request.RequestID = "req-" + in.Request.IdempotencyKey
			return in
		}} {
			d, err := runDrafts(ctx, b.cl, 1, 1, mk)
			if err != nil {
				t.Fatal(err)
			}
			res.addCart(len(mk(0).Items), d)
		}
	}
	res.events1 = measureHistory(ctx, t, b.cl.Temporal(), res.cartIDs[1], "").Events
	res.events50 = measureHistory(ctx, t, b.cl.Temporal(), res.cartIDs[50], "").Events
	if u, err := b.worker.usage(); err == nil {
		res.rssMiB = u.PeakRSSMiB
	}

	// Agents over MCP through the real gateway (docs/mcp.md#direct-reads).
	benchMCP(ctx, t, b, cfg.mcp, &res)

	// Every draft order of the run so far audits CLEAN.
	res.audited, res.auditTook, res.auditCPU = auditRun(ctx, t, b, cfg.audit)
	res.loadAfter = loadAverage()
	table := res.table(cfg.levels)
	fmt.Print(table)
	if out := os.Getenv("CARTWRIGHT_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.kill {
		killDuringLoad(ctx, t, b, load{orders: cfg.n16, concurrency: 16})
	}
}

// benchStack is the worker process, client and database of a bench run.
type benchStack struct {
	worker *proc
	env    map[string]string
	tq     string
	cl     *client.Client
	pool   *pgxpool.Pool
	stripe *stripefake.Server
}

// startBenchStack starts one worker process (workflows and activities) on
// a task queue and database of its own, and a client with the default
// options, as a customer's backend has.
func startBenchStack(ctx context.Context, t *testing.T) *benchStack {
	t.Helper()
	bin, err := workerBinary()
	if err != nil {
		t.Fatal(err)
	}
	return startBenchStackBinary(ctx, t, bin)
}

// startBenchStackBinary is startBenchStack with the worker binary bin.
func startBenchStackBinary(ctx context.Context, t *testing.T, bin string, extraEnv ...string) *benchStack {
	t.Helper()
	base := newScaleBase(ctx, t)
	env := workerEnv(base.tq, base.dsn, base.fake.URL, 24)
	if v := os.Getenv("CARTWRIGHT_BENCH_WORKER_GOGC"); v != "" { // an experiment's knob, not the product's
		env["GOGC"] = v
	}
	for _, kv := range extraEnv { // an experiment's own (NAME=value)
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	w := startWorkerBinary(t, bin, "bench", "workflows,activities", env)
	w.waitReady(t, 2*time.Minute)
	return &benchStack{worker: w, env: env, tq: base.tq, cl: base.client(ctx, t), pool: base.pool, stripe: base.fake}
}

func oneLine(int) draftorder.Input { return orderInput("bench-" + randomHex(8)) }

// drafts is one measured batch of draft orders.
type drafts struct {
	n                 int
	wall              time.Duration
	toTotal, complete []time.Duration // sorted
	ids               []string
	// serverCPU and workerCPU are the dev server's and the worker's CPU
	// per order while the batch ran (ms; the client's is not counted).
	serverCPU, workerCPU float64
	// services is serverCPU by process of a cluster (benchServices).
	services map[string]float64
}

func (d drafts) perSecond() float64 { return float64(d.n) / d.wall.Seconds() }

// runDrafts plays n users, c at a time, as the Go client's documentation
// tells a backend to: start (which answers with the total), confirm it
// (which answers with the result once the draft order exists). toTotal is
// start → total published (what the user waits for before seeing a
// price), complete is start → draft order created.
func runDrafts(ctx context.Context, cl *client.Client, n, c int, mk func(int) draftorder.Input) (drafts, error) {
	d := drafts{n: n, toTotal: make([]time.Duration, n), complete: make([]time.Duration, n), ids: make([]string, n)}
	wall, err := inFlight(n, c, func(i int) (err error) {
		d.ids[i], d.toTotal[i], d.complete[i], err = timedOrder(ctx, cl, mk(i))
		return err
	})
	d.wall = wall
	sortDurations(d.toTotal)
	sortDurations(d.complete)
	return d, err
}

// inFlight runs one(i) for every i below n, c at a time, and returns the
// wall time of the whole and the first error (a goroutine stops at its
// first; the others finish what they took).
func inFlight(n, c int, one func(i int) error) (time.Duration, error) {
	jobs := make(chan int, n)
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	began := time.Now()
	for g := 0; g < c; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := one(i); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(began), first
}

// timedOrder is one user's draft order, timed.
func timedOrder(ctx context.Context, cl *client.Client, in draftorder.Input) (string, time.Duration, time.Duration, error) {
	began := time.Now()
	h, err := cl.StartDraftOrder(ctx, in)
	if err != nil {
		return "", 0, 0, fmt.Errorf("start: %w", err)
	}
	// The start answers with the published total (Update-with-Start).
	st := h.Status
	if st.Confirmation == nil {
		return h.WorkflowID, 0, 0, fmt.Errorf("%s waits in %s, not for a confirmation", h.WorkflowID, st.State)
	}
	toTotal := time.Since(began)
	// The confirm update answers once the draft order exists, with the
	// run's result.
	ans, err := cl.ConfirmResult(ctx, h.WorkflowID, st.Confirmation.QuoteHash)
	if err != nil {
		return h.WorkflowID, 0, 0, fmt.Errorf("confirm %s: %w", h.WorkflowID, err)
	}
	if res := ans.Result; res.State != draftorder.StateDraftCreated {
		return h.WorkflowID, 0, 0, fmt.Errorf("%s ended %s: %s", h.WorkflowID, res.State, res.Message)
	}
	return h.WorkflowID, toTotal, time.Since(began), nil
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

// pct is the nearest-rank percentile p of sorted durations, in ms.
func pct(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return float64(sorted[min(max(i-1, 0), len(sorted)-1)].Microseconds()) / 1000
}

// loadAverage is the machine's 1, 5 and 15 minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
