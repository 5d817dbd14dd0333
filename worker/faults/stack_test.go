package faults

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce/quotesealtest"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

// stack is the matrix's own stack. Every process it starts is its child,
// stopped by its pid when the test ends; nothing shared is touched.
type stack struct {
	t   *testing.T
	dir string

	pg   *testenv.Cluster
	dsn  string
	pool *pgxpool.Pool // superuser: tampering and counting

	temporalBin  string
	temporalPort int
	temporalDB   string
	temporal     *proc

	stripe *proc
	proxy  *faultProxy

	workerBin string
	env       []string
	mu        sync.Mutex
	workers   []*proc

	client *client.Client
	deps   audit.Deps
}

const taskQueue = "faults"

func newStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{t: t, dir: t.TempDir()}
	s.temporalBin = need(t, "CARTWRIGHT_TEMPORAL_BIN")
	stripeBin := need(t, "CARTWRIGHT_STRIPE_MOCK_BIN")
	s.workerBin = os.Getenv("CARTWRIGHT_FAULTS_WORKER_BIN")
	if s.workerBin == "" {
		s.workerBin = filepath.Join(s.dir, "worker")
		out, err := exec.Command("go", "build", "-o", s.workerBin, "github.com/cartwright-dev/cartwright/worker").CombinedOutput()
		if err != nil {
			t.Fatalf("build worker: %v\n%s", err, out)
		}
	}

	// PostgreSQL: a private cluster this test may stop.
	s.pg = testenv.StartPrivateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	// Migrated as the owner; the workers connect as the runtime role
	// (docs/evidence.md#database-roles). s.pool is the superuser's: the
	// matrix tampers with evidence through it.
	var err error
	if s.dsn, err = testenv.PrepareDatabase(ctx, s.pg.DSN("postgres"), "cartwright"); err != nil {
		t.Fatal(err)
	}
	if s.pool, err = pgxpool.New(ctx, s.pg.DSN("cartwright")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.pool.Close)
	// Each draft order takes its T-shirts from stock when it is written
	// (docs/quote-seals.md#stock-at-the-write): enough for every scenario.
	if _, err := s.pool.Exec(ctx, `UPDATE catalog_stock SET on_hand = 1000000, reserved = 0 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}

	// Temporal: a dev server on a state file, so it survives SIGKILL.
	s.temporalPort = testenv.FreePort(t)
	s.temporalDB = filepath.Join(s.dir, "temporal.db")
	s.startTemporal()
	t.Cleanup(func() { stop(s.temporal) })

	// stripe-mock behind the fault proxy.
	stripePort := testenv.FreePort(t)
	s.stripe = s.spawn("stripe-mock", exec.Command(stripeBin, "-http-port", fmt.Sprint(stripePort)))
	t.Cleanup(func() { stop(s.stripe) })
	waitPort(t, stripePort, time.Minute)
	s.proxy = newFaultProxy(t, fmt.Sprintf("http://127.0.0.1:%d", stripePort))

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	// The stack's own payload key ring: every payload it writes to its
	// Temporal server is encrypted, like any cartwright stack's.
	payloadKey := make([]byte, 32)
	_, _ = rand.Read(payloadKey)
	s.env = append(os.Environ(),
		"CARTWRIGHT_PG_DSN="+s.dsn,
		"CARTWRIGHT_PG_MAX_CONNS=16",
		fmt.Sprintf("TEMPORAL_ADDRESS=127.0.0.1:%d", s.temporalPort),
		"TEMPORAL_NAMESPACE=default",
		"CARTWRIGHT_TASK_QUEUE="+taskQueue,
		"STRIPE_API_BASE="+s.proxy.URL,
		"STRIPE_SECRET_KEY=sk_test_123",
		"STRIPE_WEBHOOK_SECRET=whsec_faults_only",
		"CARTWRIGHT_EVIDENCE_KEY="+base64.StdEncoding.EncodeToString(key),
		fmt.Sprintf("CARTWRIGHT_WEBHOOK_ADDR=127.0.0.1:%d", testenv.FreePort(t)),
		"CARTWRIGHT_PAYLOAD_KEYS=faults-1:"+base64.StdEncoding.EncodeToString(payloadKey),
		"CARTWRIGHT_PAYLOAD_KEY_ID=faults-1",
		"CARTWRIGHT_SEAL_KEYS="+sealtest.Spec(),
		"CARTWRIGHT_QUOTE_SEAL_KEYS="+quotesealtest.Spec(),
		"CARTWRIGHT_WORKER_SIGNING_KEYS="+evidencetest.WorkerSigningRing,
		"CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS="+evidencetest.WorkerPublicRing,
		"CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS="+evidencetest.GatewayPublicRing,
		"CARTWRIGHT_LOG_LEVEL=warn",
		// A written order holds its stock this long: the payments scenario
		// lets holds end while a payment is in flight (payments_test.go).
		"CARTWRIGHT_HOLD_WINDOW="+holdWindow().String(),
	)
	// The test process reads the same configuration (client, audit).
	for _, kv := range s.env[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Cleanup(s.stopWorkers)
	s.startWorker(0)
	s.startWorker(1)

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
	return s
}

func need(t *testing.T, env string) string {
	v := os.Getenv(env)
	if v == "" {
		t.Skipf("fault matrix: %s is not set (run it with make test-faults)", env)
	}
	return v
}

// proc is a child process and a channel closed when it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// spawn starts cmd in its own process group, output to dir/name.log.
func (s *stack) spawn(name string, cmd *exec.Cmd) *proc {
	s.t.Helper()
	log, err := os.OpenFile(filepath.Join(s.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = log.Close(); close(p.done) }()
	return p
}

// stop ends a child we started: SIGTERM, then SIGKILL after 15 s.
func stop(p *proc) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill is SIGKILL of a child we started, waiting until it is gone.
func kill(p *proc) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (s *stack) startTemporal() {
	s.t.Helper()
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", fmt.Sprint(s.temporalPort), "--headless",
		"--log-level", "warn", "--db-filename", s.temporalDB,
		"--search-attribute", "CartwrightFlow=Keyword", "--search-attribute", "CartwrightState=Keyword",
		"--search-attribute", "AwaitingApproval=Bool",
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		"--dynamic-config-value", "history.timerProcessorMaxPollRPS=1000",
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
	}
	s.temporal = s.spawn("temporal", exec.Command(s.temporalBin, args...))
	s.waitTemporal(2 * time.Minute)
}

// waitTemporal waits until the dev server answers a health check.
func (s *stack) waitTemporal(limit time.Duration) {
	s.t.Helper()
	limit = testenv.Deadline(limit)
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", s.temporalPort), Logger: nopLogger{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &sdkclient.CheckHealthRequest{})
			c.Close()
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("temporal dev server not healthy after %s: %v (log %s)", limit, err, filepath.Join(s.dir, "temporal.log"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// killTemporal SIGKILLs the dev server and starts it again on its state
// file after down.
func (s *stack) killTemporal(down time.Duration) {
	kill(s.temporal)
	time.Sleep(down)
	s.startTemporal()
}

// startWorker starts worker process i (0 serves every role; the others
// poll workflows and activities only, so only one binds the webhook port).
func (s *stack) startWorker(i int) {
	cmd := exec.Command(s.workerBin)
	cmd.Env = append(append([]string{}, s.env...), "CARTWRIGHT_WORKER_ROLES="+roles(i))
	w := s.spawn(fmt.Sprintf("worker-%d", i), cmd)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.workers) <= i {
		s.workers = append(s.workers, nil)
	}
	s.workers[i] = w
}

func roles(i int) string {
	if i == 0 {
		return "workflows,activities,webhook,schedules"
	}
	return "workflows,activities"
}

// killWorker SIGKILLs worker i and starts it again after down.
func (s *stack) killWorker(i int, down time.Duration) {
	s.mu.Lock()
	w := s.workers[i]
	s.mu.Unlock()
	kill(w)
	time.Sleep(down)
	s.startWorker(i)
}

func (s *stack) stopWorkers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.workers {
		stop(w)
	}
}

func waitPort(t *testing.T, port int, limit time.Duration) {
	t.Helper()
	limit = testenv.Deadline(limit)
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on :%d after %s", port, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// nopLogger silences the SDK's health-check dials.
type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
