package scaletest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/health"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// binDir holds the worker binary this test run built; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// workerBinary builds ./worker once per test binary run, with the build
// hash evidence records.
var workerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "cartwright-scaletest-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "worker")
	cmd := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/cartwright-dev/cartwright/toolkit.build=scaletest",
		"github.com/cartwright-dev/cartwright/worker")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./worker: %v\n%s", err, out)
	}
	return bin, nil
})

// proc is one worker process this test started.
type proc struct {
	name        string
	roles       string
	webhookAddr string
	healthAddr  string
	cmd         *exec.Cmd
	log         *bytes.Buffer
	logMu       *sync.Mutex
	done        chan struct{}
}

// lockedWriter serialises the process's stdout and stderr into one buffer.
type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// freeAddr is a 127.0.0.1 port nothing listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startWorker runs the worker binary with env (and nothing else of the
// test's environment but PATH, so no stray TEMPORAL_* or profile file
// changes what it connects to). It is stopped at cleanup, and its log is
// printed if the test failed.
func startWorker(t *testing.T, name, roles string, env map[string]string) *proc {
	t.Helper()
	bin, err := workerBinary()
	if err != nil {
		t.Fatal(err)
	}
	return startWorkerBinary(t, bin, name, roles, env)
}

// startWorkerBinary is startWorker running the worker binary bin (an
// experiment's other build: TestExperimentExtras).
func startWorkerBinary(t *testing.T, bin, name, roles string, env map[string]string) *proc {
	t.Helper()
	p := &proc{name: name, roles: roles, webhookAddr: freeAddr(t), healthAddr: freeAddr(t)}
	var vars []string
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	vars = append(vars,
		"CARTWRIGHT_WORKER_ROLES="+roles,
		"CARTWRIGHT_WEBHOOK_ADDR="+p.webhookAddr,
		"CARTWRIGHT_HEALTH_ADDR="+p.healthAddr,
	)
	p.start(t, exec.Command(bin), vars)
	return p
}

// start runs cmd as p, with env and nothing else of the test's environment
// but PATH and a HOME of its own, its stdout and stderr in p's log. It is
// stopped at cleanup, and its log is printed if the test failed.
func (p *proc) start(t *testing.T, cmd *exec.Cmd, env []string) {
	t.Helper()
	p.cmd, p.log, p.logMu, p.done = cmd, &bytes.Buffer{}, &sync.Mutex{}, make(chan struct{})
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var w io.Writer = lockedWriter{mu: p.logMu, buf: p.log}
	if dir := os.Getenv("CARTWRIGHT_BENCH_LOG_DIR"); dir != "" { // an experiment's whole logs
		f, err := os.CreateTemp(dir, p.name+"-*.log")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		w = io.MultiWriter(w, f)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- log of worker %s (%s), last 4 KiB:\n%s", p.name, p.roles, p.tail(4096))
		}
	})
}

func (p *proc) tail(n int) string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	b := p.log.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill is the crash: SIGKILL, no draining, no goodbye to the server.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.done
}

// stop ends the process gracefully (SIGTERM), SIGKILL after 15 s.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// usage is a process's peak resident memory and CPU time so far, from
// /proc (Linux): the numbers the Helm chart's resource requests come from.
type usage struct {
	PeakRSSMiB float64
	CPU        time.Duration
}

func (p *proc) usage() (usage, error) {
	var u usage
	pid := p.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			u.PeakRSSMiB = kb / 1024
		}
	}
	u.CPU = procCPU(pid)
	return u, nil
}

// procCPU is the user+system CPU time process pid has used (0 if it
// cannot be read).
func procCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): utime and
	// stime are fields 14 and 15 of the whole line, in clock ticks (100/s).
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) <= 12 {
		return 0
	}
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// waitReady polls the worker's /readyz until it answers 200: the Temporal
// worker started and PostgreSQL answers.
func (p *proc) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	within = testenv.Deadline(within)
	deadline := time.Now().Add(within)
	url := "http://" + p.healthAddr + health.ReadyPath
	for {
		if p.exited() {
			t.Fatalf("worker %s exited before it was ready:\n%s", p.name, p.tail(4096))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return
			}
		}
		cancel()
		if time.Now().After(deadline) {
			t.Fatalf("worker %s not ready after %s (last: %v):\n%s", p.name, within, err, p.tail(4096))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
