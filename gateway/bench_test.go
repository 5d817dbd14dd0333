package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// BenchmarkMCPToolsCall measures tools/call round trips of a read-only
// tool (knowledge.cite) over streamable HTTP through the whole stack: the
// gateway, a tool call workflow on the dev server, the invoker and its
// evidence write. Each call is a new run (no idempotency key). Reports
// calls/s and p50/p99 latency at 1 and 16 concurrent clients:
//
//	go test ./gateway -run '^$' -bench MCPToolsCall -benchtime 64x
//
// The direct/ runs make the same calls with client.CallTool (no MCP, no
// gateway) in the same process and stack: on a loaded machine the ratio of
// the two says what the gateway costs.
func BenchmarkMCPToolsCall(b *testing.B) {
	s := newBenchStack(b)
	args := map[string]any{"claim": "Stripe needs the representative's date of birth"}
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("mcp/clients=%d", clients), func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = s.connect(b, s.token, nil)
			}
			roundTrips(b, clients, func(ctx context.Context, worker int) error {
				res, err := sessions[worker].CallTool(ctx, &mcp.CallToolParams{Name: "knowledge.cite", Arguments: args})
				if err == nil && res.IsError {
					err = fmt.Errorf("isError: %v", res.Content)
				}
				return err
			})
		})
		b.Run(fmt.Sprintf("direct/clients=%d", clients), func(b *testing.B) {
			input, _ := json.Marshal(args)
			roundTrips(b, clients, func(ctx context.Context, _ int) error {
				env, _, err := s.client.CallTool(ctx, toolkit.ToolCall{Tool: "knowledge.cite", Input: input,
					Request: toolkit.Request{RequestID: "req-" + toolkit.NewCorrelationID()[5:], UserID: "bench_user",
						Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "bench-agent"}}}, time.Now().Add(time.Minute))
				if err == nil && !env.OK {
					err = fmt.Errorf("not ok: %+v", env.Error)
				}
				return err
			})
		})
	}
}

// roundTrips runs b.N calls on clients goroutines and reports calls/s and
// the p50 and p99 latency.
func roundTrips(b *testing.B, clients int, one func(ctx context.Context, worker int) error) {
	var next, failed atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := one(ctx, w)
				cancel()
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d calls failed, first: %v", n, b.N, firstErr.Load())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[(b.N*99)/100].Microseconds())/1000, "p99_ms")
}
