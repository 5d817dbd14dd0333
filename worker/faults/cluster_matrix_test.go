package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

// clusterSizes are the cluster matrix's knobs: FAULTS=short or long.
type clusterSizes struct {
	orders, onboardings, killsPerService int
	pgOutage                             time.Duration
}

func clusterMatrixSizes() (string, clusterSizes) {
	if os.Getenv("FAULTS") == "long" {
		return "long", clusterSizes{orders: 20, onboardings: 3, killsPerService: 2, pgOutage: 60 * time.Second}
	}
	return "short", clusterSizes{orders: 10, onboardings: 2, killsPerService: 1, pgOutage: 15 * time.Second}
}

// clusterCtl runs scripts/cluster.sh on the matrix's own cluster (the
// environment faults-cluster.sh set: CLUSTER_DIR, CLUSTER_PORT_BASE,
// CLUSTER_PG=private) — the same commands an operator types, `up` being
// `make cluster`'s restart of whatever is down.
type clusterCtl struct {
	t      *testing.T
	script string
	log    string
	// makeUp: `up` runs `make cluster` (after the first, which the
	// script runs directly).
	makeUp bool
}

// run runs one command; a failure is reported (t.Errorf: faults run in a
// goroutine of their own) and the matrix goes on, its orders then showing
// what the failed restart cost.
func (c clusterCtl) run(args ...string) bool {
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Errorf("cluster.sh log: %v", err)
		return false
	}
	defer f.Close()
	fmt.Fprintf(f, "\n### %s cluster.sh %s\n", time.Now().Format(time.TimeOnly), strings.Join(args, " "))
	cmd := exec.Command(c.script, args...)
	if len(args) == 1 && args[0] == "up" && c.makeUp {
		// `make cluster` itself, as an operator restarts what is down.
		cmd = exec.Command("make", "-s", "-C", filepath.Dir(filepath.Dir(c.script)), "cluster")
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		c.t.Errorf("cluster.sh %s: %v (log %s)", strings.Join(args, " "), err, c.log)
		return false
	}
	return true
}

// TestFaultMatrixCluster is the fault matrix on Temporal's real topology
// (docs/testing.md#fault-matrix-on-the-cluster-make-test-faults-cluster): a
// cluster of its own (four temporal-server processes, mTLS, a private
// PostgreSQL), cartwright's worker on it, and draft orders and onboardings
// in flight while it SIGKILLs history, matching, the frontend and our
// worker (each restarted by `make cluster`, which starts what is down),
// restarts all four one by one, and stops PostgreSQL. Every order and
// onboarding completes, one draft row each, no evidence gaps, every audit
// CLEAN.
func TestFaultMatrixCluster(t *testing.T) {
	testenv.Integration(t)
	script := os.Getenv("CARTWRIGHT_CLUSTER_SCRIPT")
	if script == "" || os.Getenv("CLUSTER_DIR") == "" {
		t.Skip("cluster fault matrix: run it with make test-faults-cluster")
	}
	form, sz := clusterMatrixSizes()
	s, ctl := newClusterStack(t, script)
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		t.Logf("%s: %d runs, %d completed, %d failed, %d duplicate rows, %d evidence gaps, %d audit findings — %s",
			r.scenario, r.orders, r.completed, r.failed, r.duplicates, r.gaps, r.findings, r.note)
	}
	defer func() { printTable(t, "cluster, "+form, rows) }()

	add(s.baseline(t))
	for _, svc := range []string{"history", "matching", "frontend", "cartwright-worker"} {
		for k := 0; k < sz.killsPerService; k++ {
			add(s.clusterFault(t, sz, "SIGKILL "+svc+", restarted by make cluster", func() {
				ctl.run("kill", svc)
				time.Sleep(2 * time.Second)
				ctl.run("up")
			}))
		}
	}
	add(s.clusterFault(t, sz, "rolling restart of history, matching, frontend, worker", func() {
		for _, svc := range []string{"history", "matching", "frontend", "worker"} {
			ctl.run("stop", svc)
			ctl.run("up")
		}
	}))
	add(s.clusterFault(t, sz, fmt.Sprintf("PostgreSQL stopped %s (persistence, visibility, app)", sz.pgOutage), func() {
		ctl.run("pg-stop")
		time.Sleep(sz.pgOutage)
		ctl.run("pg-start")
		ctl.run("up") // whatever gave up while the database was gone
	}))

	for _, r := range rows {
		switch {
		case r.failed > 0 || r.completed != r.orders:
			t.Errorf("%s: %d of %d runs did not complete: %s", r.scenario, r.orders-r.completed, r.orders, r.note)
		case r.duplicates > 0:
			t.Errorf("%s: %d duplicate rows", r.scenario, r.duplicates)
		case r.gaps > 0 || r.findings > 0:
			t.Errorf("%s: %d evidence gaps, %d audit findings: %s", r.scenario, r.gaps, r.findings, r.note)
		}
	}
}

// newClusterStack brings the matrix's cluster up with a fault proxy before
// its stripe-mock (so onboardings can finish), and returns the matrix's
// stack on it: the client, audit and superuser pool from the cluster's
// environment file.
func newClusterStack(t *testing.T, script string) (*stack, clusterCtl) {
	dir := os.Getenv("CLUSTER_DIR")
	base, err := strconv.Atoi(os.Getenv("CLUSTER_PORT_BASE"))
	if err != nil {
		t.Fatalf("CLUSTER_PORT_BASE: %v", err)
	}
	s := &stack{t: t, dir: t.TempDir()}
	s.proxy = newFaultProxy(t, fmt.Sprintf("http://127.0.0.1:%d", base+14))
	t.Setenv("CLUSTER_STRIPE_API_BASE", s.proxy.URL)
	t.Setenv("CLUSTER_UI", "0")
	ctl := clusterCtl{t: t, script: script, log: filepath.Join(dir, "faults-cluster.log")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CLUSTER_KEEP") != "1" {
		t.Cleanup(func() { _ = ctl.run("down") })
	}
	if !ctl.run("up") {
		t.FailNow()
	}
	// The restarts below are `make cluster`, reusing the binaries this
	// first `up` built.
	t.Setenv("CLUSTER_NO_BUILD", "1")
	ctl.makeUp = true
	t.Setenv("CARTWRIGHT_CLUSTER_ENV", filepath.Join(dir, "env"))
	env := testenv.ClusterEnv(t)
	t.Setenv("CARTWRIGHT_LOG_LEVEL", "warn")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.pool, err = pgxpool.New(ctx, env["CARTWRIGHT_CLUSTER_PG_ADMIN_DSN"]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.pool.Close)
	// Each draft order takes its T-shirts from stock when it is written
	// (docs/quote-seals.md#stock-at-the-write): enough for every scenario.
	if _, err := s.pool.Exec(ctx, `UPDATE catalog_stock SET on_hand = 1000000, reserved = 0 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.AckTimeout = -1
	if s.client, err = client.New(ctx, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.client.Close)
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	deps, closeDeps, err := audit.Open(ctx, cfg, wiring.ToolSpecs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeDeps)
	s.deps = deps
	return s, ctl
}

// clusterFault runs one fault while work is in flight: onboardings waiting
// for their merchants and half the orders quoted (their confirmation and
// draft-order write meet the fault), the other half started around it.
// Every run must end after the fault began, and complete.
func (s *stack) clusterFault(t *testing.T, sz clusterSizes, name string, fault func()) row {
	ctx := scenarioCtx(t, 12*time.Minute+sz.pgOutage)
	s.proxy.setComplete(false)
	merchants := s.startOnboardings(ctx, t, "cm", sz.onboardings)
	ks := keys("cluster", sz.orders)
	s.quote(ctx, t, ks[:len(ks)/2])
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fault()
	}()
	outs := s.driveAll(ctx, ks, len(ks), nil)
	<-done
	took := time.Since(began).Round(100 * time.Millisecond)
	after := endedAfter(outs, began)
	r := s.measure(ctx, name, outs, fmt.Sprintf("%d orders in flight (%d quoted before), %d onboardings waiting; fault and restart took %s",
		len(ks), len(ks)/2, len(merchants), took))
	if after != len(ks) {
		r.failed += len(ks) - after
		r.note = joinNote(r.note, fmt.Sprintf("%d orders ended before the fault", len(ks)-after))
	}
	// The onboardings: the runs are counted with the orders.
	var ob row
	s.finishOnboardings(ctx, &ob, merchants)
	r.orders += len(merchants)
	r.completed += ob.completed
	r.failed += ob.failed
	r.gaps += ob.gaps
	r.findings += ob.findings
	r.note = joinNote(r.note, ob.note)
	return r
}
