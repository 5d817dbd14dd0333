package gateway_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPToolsCall measures tools/call round trips of a read-only
// tool (knowledge.cite) over streamable HTTP through the whole stack: the
// gateway, a ToolCall workflow on the dev server, the invoker and its
// evidence write. Each call is a new run (no idempotency key). Reports
// calls/s and p50/p99 latency at 1 and 16 concurrent clients:
//
//	go test ./gateway -run '^$' -bench MCPToolsCall -benchtime 64x
func BenchmarkMCPToolsCall(b *testing.B) {
	s := newBenchStack(b)
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = s.connect(b, s.token, nil)
			}
			args := map[string]any{"claim": "Stripe needs the representative's date of birth"}
			var next atomic.Int64
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			var failed atomic.Int64
			b.ResetTimer()
			start := time.Now()
			for _, sess := range sessions {
				wg.Add(1)
				go func(sess *mcp.ClientSession) {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "knowledge.cite", Arguments: args})
						cancel()
						lat[i] = time.Since(t0)
						if err != nil || res.IsError {
							failed.Add(1)
						}
					}
				}(sess)
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d of %d calls failed", n, b.N)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[(b.N*99)/100].Microseconds())/1000, "p99_ms")
		})
	}
}
