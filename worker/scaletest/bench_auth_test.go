package scaletest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// authBenchGoal is the most authorization may add to the CPU of a draft
// order on the cluster (docs/performance.md#authorization-on-the-cluster).
const authBenchGoal = 1.10

// authSide is one side of the comparison: the frontend with cartwright's
// authorizer and every program carrying its provider token (on), or
// without the authorizer and without tokens (off, mTLS only).
type authSide struct {
	name string
	on   bool
}

// authFigures is one measured batch of one side.
type authFigures struct {
	worker   float64            // the worker's CPU per order (ms)
	services map[string]float64 // each cluster process's CPU per order (ms)
	perSec   float64
}

func (f authFigures) total() float64 { return f.worker + sumOf(f.services) }

// TestBenchAuthorizationCost is the second half of `make bench
// BENCH_TARGET=cluster` (scripts/test.sh bench): on the bench's own
// cluster, with the provider running, it measures draft orders at 16 in
// flight with authorization off and on, alternating which goes first, in
// rounds of CARTWRIGHT_BENCH_AUTH_N orders each. Between the sides the
// frontend is restarted with or without cartwright's authorizer
// (CARTWRIGHT_BENCH_AUTH_SWITCH: scripts/cluster.sh frontend-auth), and
// a worker process and a client of the side are started: on, each
// fetches its own client-credentials token (internal/servicetoken) and
// sends it with every call. It checks that each side is the side it
// claims (a token-less call refused on, answered off), prints the CPU per
// order of both and their ratio against the goal (at most 10 % more), and
// leaves the frontend without the authorizer as it found it. A loaded
// machine is not a failing build: the ratio is reported, not asserted.
func TestBenchAuthorizationCost(t *testing.T) {
	sw := os.Getenv("CARTWRIGHT_BENCH_AUTH_SWITCH")
	if os.Getenv("CARTWRIGHT_BENCH") != "1" || sw == "" {
		t.Skip("`make bench BENCH_TARGET=cluster` runs this against a cluster of its own with the provider")
	}
	testenv.Integration(t)
	rounds, n := envInt("CARTWRIGHT_BENCH_AUTH_ROUNDS", 3), envInt("CARTWRIGHT_BENCH_AUTH_N", 200)
	const c = 16
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	loadBefore := loadAverage()
	base := newScaleBase(ctx, t)
	// On an authorizing cluster only cartwright's queues may be polled
	// (deploy/temporal/authorization.yaml).
	tq := "cartwright-bench-" + randomHex(6)
	base.tq = tq
	sides := []authSide{{"off", false}, {"on", true}}
	res := map[string][]authFigures{}
	defer switchFrontendAuth(t, sw, false)
	for r := 0; r < rounds; r++ {
		order := sides
		if r%2 == 1 { // neither side always goes first
			order = []authSide{sides[1], sides[0]}
		}
		for _, s := range order {
			switchFrontendAuth(t, sw, s.on)
			f := measureAuthSide(ctx, t, base, tq, s, n, c)
			res[s.name] = append(res[s.name], f)
			t.Logf("round %d, authorization %s: %.1f ms of CPU per order (worker %.1f), %.1f orders/s (load %s)",
				r+1, s.name, f.total(), f.worker, f.perSec, loadAverage())
		}
	}
	table := authTable(res, rounds, n, c, loadBefore, loadAverage())
	fmt.Print(table)
	if out := os.Getenv("CARTWRIGHT_BENCH_OUT"); out != "" {
		fh, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(table); err != nil {
			t.Fatal(err)
		}
	}
}

// measureAuthSide runs one side's worker and client, warms them up, and
// measures n draft orders at c in flight.
func measureAuthSide(ctx context.Context, t *testing.T, base scaleBase, tq string, s authSide, n, c int) authFigures {
	t.Helper()
	env := workerEnv(tq, base.dsn, base.fake.URL, 24)
	if s.on {
		for k, v := range oidcEnv(t, "cartwright-worker") {
			env[k] = v
		}
	}
	w := startWorker(t, "bench-auth-"+s.name, "workflows,activities", env)
	defer w.stop()
	w.waitReady(t, 2*time.Minute)
	for k := range oidcEnv(t, "cartwright-backend") {
		t.Setenv(k, "")
	}
	if s.on {
		for k, v := range oidcEnv(t, "cartwright-backend") {
			t.Setenv(k, v)
		}
	}
	cl := base.client(ctx, t)
	defer cl.Close()
	if _, err := runDrafts(ctx, cl, floorWarmup(n), c, oneLine); err != nil {
		t.Fatalf("authorization %s, warm-up: %v", s.name, err)
	}
	settle()
	by, worker := serverCPUBy(), procCPU(w.cmd.Process.Pid)
	d, err := runDrafts(ctx, cl, n, c, oneLine)
	if err != nil {
		t.Fatalf("authorization %s: %v", s.name, err)
	}
	return authFigures{worker: perOrder(procCPU(w.cmd.Process.Pid)-worker, n), services: perOrderBy(by, serverCPUBy(), n), perSec: d.perSecond()}
}

// switchFrontendAuth restarts the cluster's frontend with or without the
// authorizer, points the CPU snapshots at the processes now running, and
// checks that the switch took: a call without a token is refused with
// the authorizer and answered without it.
func switchFrontendAuth(t *testing.T, sw string, on bool) {
	t.Helper()
	arg := map[bool]string{true: "on", false: "off"}[on]
	f := strings.Fields(sw)
	out, err := exec.Command(f[0], append(f[1:], arg)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", sw, arg, err, out)
	}
	t.Setenv("CARTWRIGHT_BENCH_SERVER_PIDS", clusterPIDs(t))
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	for k := range oidcEnv(t, "cartwright-backend") {
		t.Setenv(k, "")
	}
	opts := envOptions(t, "cartwright-bench")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.New(ctx, opts)
	if err == nil {
		defer cl.Close()
		_, err = cl.Temporal().WorkflowService().ListWorkflowExecutions(ctx,
			&workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1})
	}
	var denied *serviceerror.PermissionDenied
	switch refused := errors.As(err, &denied) || strings.Contains(fmt.Sprint(err), "PermissionDenied"); {
	case on && !refused:
		t.Fatalf("authorization on, yet a call without a token got %v, want PermissionDenied", err)
	case !on && err != nil:
		t.Fatalf("authorization off, yet a call without a token got %v", err)
	}
}

// clusterPIDs is CARTWRIGHT_BENCH_SERVER_PIDS for the processes running
// now: the four services and the provider by their pid files
// (CARTWRIGHT_BENCH_CLUSTER_DIR), the PostgreSQL as the script named it.
func clusterPIDs(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CARTWRIGHT_BENCH_CLUSTER_DIR")
	var parts []string
	// Temporal's worker service is "system worker" here: the table's
	// "worker" is cartwright's.
	for name, label := range map[string]string{"frontend": "frontend", "history": "history", "matching": "matching",
		"worker": "system worker", "hydra": "provider (Hydra)"} {
		b, err := os.ReadFile(filepath.Join(dir, "pids", name+".pid"))
		if err != nil {
			t.Fatalf("the cluster's %s: %v", name, err)
		}
		parts = append(parts, label+"="+strings.TrimSpace(string(b)))
	}
	if pg := benchServices()["postgres"]; pg != 0 {
		parts = append(parts, "postgres="+strconv.Itoa(pg))
	}
	return strings.Join(parts, ",")
}

// oidcEnv is the environment that has a program fetch client's token from
// the bench cluster's provider (scripts/cluster-idp.sh idp_client_env).
func oidcEnv(t *testing.T, clientID string) map[string]string {
	t.Helper()
	url := os.Getenv("CARTWRIGHT_BENCH_OIDC_TOKEN_URL")
	if url == "" {
		t.Fatal("CARTWRIGHT_BENCH_OIDC_TOKEN_URL is not set: the bench's cluster runs no provider")
	}
	return map[string]string{
		"CARTWRIGHT_OIDC_TOKEN_URL": url, "CARTWRIGHT_OIDC_CLIENT_ID": clientID,
		"CARTWRIGHT_OIDC_CLIENT_SECRET_FILE": filepath.Join(os.Getenv("CARTWRIGHT_BENCH_CLUSTER_DIR"), "idp", clientID+".secret"),
		// The provider's https issuer is signed by the cluster's client CA.
		"CARTWRIGHT_OIDC_CA_FILE": filepath.Join(os.Getenv("CARTWRIGHT_BENCH_CLUSTER_DIR"), "tls", "ca.crt"),
	}
}

// authTable prints both sides, each process's share, and the ratio of
// the medians of the rounds' CPU per order.
func authTable(res map[string][]authFigures, rounds, n, c int, loadBefore, loadAfter string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Authorization on the cluster: off against on (%d rounds of %d draft orders at %d in flight each side; load %s → %s)\n\n",
		rounds, n, c, loadBefore, loadAfter)
	names := map[string]bool{}
	for _, fs := range res {
		for _, f := range fs {
			for k := range f.services {
				names[k] = true
			}
		}
	}
	var procs []string
	for k := range names {
		procs = append(procs, k)
	}
	sort.Strings(procs)
	fmt.Fprintf(&b, "| authorization | CPU per order (ms, median of rounds) | worker | %s | orders/s |\n|---|---|---|%s---|\n",
		strings.Join(procs, " | "), strings.Repeat("---|", len(procs)))
	med := map[string]float64{}
	for _, side := range []string{"off", "on"} {
		fs := res[side]
		med[side] = authMedian(fs, authFigures.total)
		fmt.Fprintf(&b, "| %s | %.2f | %.2f |", side, med[side], authMedian(fs, func(f authFigures) float64 { return f.worker }))
		for _, p := range procs {
			fmt.Fprintf(&b, " %.2f |", authMedian(fs, func(f authFigures) float64 { return f.services[p] }))
		}
		fmt.Fprintf(&b, " %.1f |\n", authMedian(fs, func(f authFigures) float64 { return f.perSec }))
	}
	if med["off"] > 0 {
		ratio := med["on"] / med["off"]
		verdict := "met"
		if ratio > authBenchGoal {
			verdict = "NOT met"
		}
		fmt.Fprintf(&b, "\nCPU per draft order, on / off: **%.3f×** (goal: at most %.2f×, %s)\n", ratio, authBenchGoal, verdict)
	}
	return b.String()
}

// authMedian is the median of of over the rounds' figures.
func authMedian(fs []authFigures, of func(authFigures) float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	v := make([]float64, len(fs))
	for i, f := range fs {
		v[i] = of(f)
	}
	return median(v)
}
