package scaletest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// starterBinary builds ./starter once per test binary run: the real MCP
// gateway (`starter mcp serve`) the bench's agents call.
var starterBinary = sync.OnceValues(func() (string, error) {
	if _, err := workerBinary(); err != nil { // makes binDir
		return "", err
	}
	bin := filepath.Join(binDir, "starter")
	cmd := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/cartwright-dev/cartwright/toolkit.build=scaletest",
		"github.com/cartwright-dev/cartwright/starter")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./starter: %v\n%s", err, out)
	}
	return bin, nil
})

// mcpGateway is one `starter mcp serve` process of a bench run and a
// token for it whose budget does not bind.
type mcpGateway struct {
	proc  *proc
	url   string
	token string
}

// startGateway starts the MCP gateway on the bench's worker, task queue
// and database, with direct reads on or off (docs/mcp.md#direct-reads),
// and waits until it serves.
func startGateway(ctx context.Context, t *testing.T, b *benchStack, direct bool) *mcpGateway {
	t.Helper()
	bin, err := starterBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := &proc{name: "mcp", roles: fmt.Sprintf("gateway, direct reads %v", direct)}
	var env []string
	for k, v := range b.env {
		env = append(env, k+"="+v)
	}
	// 12 connections serve 20 clients on 2 cores; fewer than the
	// worker's 24, since the bench shares PostgreSQL's connections.
	env = append(env, "CARTWRIGHT_MCP_ADDR="+addr, fmt.Sprintf("CARTWRIGHT_MCP_DIRECT_READS=%v", direct), "CARTWRIGHT_PG_MAX_CONNS=12",
		// The gateway signs the rows of the reads it answers with its own
		// ring (docs/operators.md#keys-and-grants-per-process).
		"CARTWRIGHT_GATEWAY_SIGNING_KEYS="+evidencetest.GatewaySigningRing)
	if v := os.Getenv("CARTWRIGHT_BENCH_GATEWAY_GOGC"); v != "" { // an experiment's knob, not the product's
		env = append(env, "GOGC="+v)
	}
	p.start(t, exec.Command(bin, "mcp", "serve"), env)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(p.tail(8192), "MCP gateway on") {
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("the MCP gateway did not start:\n%s", p.tail(4096))
		}
		time.Sleep(50 * time.Millisecond)
	}
	nt, err := gateway.NewTokens(testenv.IssuerPool(t, b.pool.Config().ConnString())).Create(ctx, gateway.Actor{ID: "bench-agent-" + randomHex(4),
		CallsPerMinute: 1_000_000, BytesPerMinute: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return &mcpGateway{proc: p, url: "http://" + addr + gateway.Path, token: nt.Token}
}

// bearerTransport adds the token to every request of the SDK's client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// sessions opens n MCP sessions with the official SDK's client over
// streamable HTTP, as n agents would.
func (g *mcpGateway) sessions(ctx context.Context, t *testing.T, n int) []*mcp.ClientSession {
	t.Helper()
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		c := mcp.NewClient(&mcp.Implementation{Name: "cartwright-bench", Version: "0.0.1"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url,
			HTTPClient: &http.Client{Transport: bearerTransport{g.token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out[i] = s
	}
	return out
}

// mcpCalls is one measured batch of MCP tool calls.
type mcpCalls struct {
	what    string
	clients int
	n       int
	wall    time.Duration
	lat     []time.Duration // sorted
	// gatewayCPU, serverCPU and workerCPU are CPU per call (ms) of the
	// gateway process, the dev server and the worker while the batch ran.
	gatewayCPU, serverCPU, workerCPU float64
}

func (m mcpCalls) perSecond() float64 { return float64(m.n) / m.wall.Seconds() }

// mcpCall is one tools/call; a result that is not ok is an error.
func mcpCall(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) (toolkit.Response, error) {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return toolkit.Response{}, err
	}
	var env toolkit.Response
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &env); err != nil {
		return env, err
	}
	if res.IsError || !env.OK {
		return env, fmt.Errorf("%s: isError %v: %+v", tool, res.IsError, env.Error)
	}
	if env.SnapshotID() == "" {
		return env, fmt.Errorf("%s answered without evidence", tool)
	}
	return env, nil
}

// runMCP makes n calls of tool over sess, len(sess) at a time, args(i)
// each, measured with the CPU of the gateway, the dev server and the
// worker.
func runMCP(ctx context.Context, b *benchStack, g *mcpGateway, what string, sess []*mcp.ClientSession, n int,
	tool string, args func(i int) map[string]any) (mcpCalls, error) {
	m := mcpCalls{what: what, clients: len(sess), n: n, lat: make([]time.Duration, n)}
	gw, server, worker := procCPU(g.proc.cmd.Process.Pid), serverCPU(), procCPU(b.worker.cmd.Process.Pid)
	jobs := make(chan int, n)
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	began := time.Now()
	for _, s := range sess {
		wg.Add(1)
		go func(s *mcp.ClientSession) {
			defer wg.Done()
			for i := range jobs {
				t0 := time.Now()
				_, err := mcpCall(ctx, s, tool, args(i))
				m.lat[i] = time.Since(t0)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}(s)
	}
	wg.Wait()
	m.wall = time.Since(began)
	m.gatewayCPU = perOrder(procCPU(g.proc.cmd.Process.Pid)-gw, n)
	m.serverCPU = perOrder(serverCPU()-server, n)
	m.workerCPU = perOrder(procCPU(b.worker.cmd.Process.Pid)-worker, n)
	sortDurations(m.lat)
	return m, first
}

// mcpConfig is how many calls each MCP batch makes.
type mcpConfig struct{ one, many, clients, keys, writes int }

// quoteArgs is a read-only quote of one T-shirt line (the quantity varies,
// so the calls are not all one input).
func quoteArgs(i int) map[string]any {
	return map[string]any{"currency": "EUR", "items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1 + i%5}}}
}

// benchMCP is the agents' side of `make bench`: read-only quotes over MCP
// through the real gateway, answered directly (docs/mcp.md#direct-reads)
// and, for comparison in the same run, by a gateway with direct reads off
// (each a tool call workflow); the same key's answer and CONFLICT; a write
// tool (a tool call workflow); and the audit of every direct call (CLEAN).
func benchMCP(ctx context.Context, t *testing.T, b *benchStack, cfg mcpConfig, res *benchResult) {
	t.Helper()
	since := time.Now().Add(-time.Second)
	for _, direct := range []bool{true, false} {
		g := startGateway(ctx, t, b, direct)
		sess := g.sessions(ctx, t, cfg.clients)
		label := "direct"
		if !direct {
			label = "tool-call workflow"
		}
		// Warm-up: sessions, connections, caches.
		if _, err := runMCP(ctx, b, g, "warm-up", sess, 2*cfg.clients, "pricing.get_realtime_quote", quoteArgs); err != nil {
			t.Fatal(err)
		}
		one, many := cfg.one, cfg.many
		if !direct { // the slow path: fewer calls say as much
			one, many = max(20, one/4), max(100, many/5)
		}
		settle()
		m, err := runMCP(ctx, b, g, "read-only quote, "+label, sess[:1], one, "pricing.get_realtime_quote", quoteArgs)
		if err != nil {
			t.Fatal(err)
		}
		res.mcp = append(res.mcp, m)
		settle()
		if m, err = runMCP(ctx, b, g, "read-only quote, "+label, sess, many, "pricing.get_realtime_quote", quoteArgs); err != nil {
			t.Fatal(err)
		}
		res.mcp = append(res.mcp, m)
		if !direct {
			g.proc.stop()
			continue
		}
		res.sameKey, res.sameKeyBad = sameKeyChecks(ctx, t, sess[0], cfg.keys)
		b.stripe.SetAccount("acct_1CwJaneCrafts001", stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
		settle()
		if m, err = runMCP(ctx, b, g, "write (stripe.create_login_link), tool-call workflow", sess[:1], cfg.writes, "stripe.create_login_link",
			func(int) map[string]any {
				return map[string]any{"stripe_account_id": "acct_1CwJaneCrafts001", "idempotency_key": "bench-" + randomHex(8)}
			}); err != nil {
			t.Fatal(err)
		}
		res.mcp = append(res.mcp, m)
		if u, err := g.proc.usage(); err == nil {
			res.gatewayRSSMiB = u.PeakRSSMiB
		}
		g.proc.stop()
	}
	store := auditorStore(t, b)
	began := time.Now()
	rep, err := store.AuditDirect(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	res.directAudit, res.directAuditTook = rep, time.Since(began)
	if !rep.Clean {
		t.Fatalf("the direct calls' audit has findings: %+v", rep.Findings[:min(5, len(rep.Findings))])
	}
}

// sameKeyChecks makes n keyed quotes, each asked again (the same answer:
// the same envelope) and with another quantity (CONFLICT); it returns how
// many keys it checked and how many broke the contract.
func sameKeyChecks(ctx context.Context, t *testing.T, s *mcp.ClientSession, n int) (int, int) {
	t.Helper()
	bad := 0
	for i := 0; i < n; i++ {
		key := "bench-key-" + randomHex(8)
		args := quoteArgs(i)
		args["idempotency_key"] = key
		first, err := mcpCall(ctx, s, "pricing.get_realtime_quote", args)
		if err != nil {
			t.Fatal(err)
		}
		again, err := mcpCall(ctx, s, "pricing.get_realtime_quote", args)
		if err != nil || !reflect.DeepEqual(first, again) {
			t.Logf("key %s: the same request answered %v %+v, first %+v", key, err, again.Evidence, first.Evidence)
			bad++
		}
		other := quoteArgs(i + 1)
		other["idempotency_key"] = key
		env, err := mcpCall(ctx, s, "pricing.get_realtime_quote", other)
		if err == nil || env.Error == nil || env.Error.Code != toolkit.Conflict {
			t.Logf("key %s with other arguments: %v %+v", key, err, env.Error)
			bad++
		}
	}
	return n, bad
}
