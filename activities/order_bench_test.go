package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/logging"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// BenchmarkOrderTools is a draft order's tool work as the worker does it
// (docs/performance.md#one-quote-step): the Quote step (origins, pricing,
// compliance, the sealed total, one staged evidence batch) and the write
// (checkout.create_draft_order, which re-reads and re-derives the total),
// through the real registry, invoker, signed evidence store, quote seals
// and the production log core, on the test PostgreSQL. One op is one
// order; its CPU is the worker's tool pipeline without the SDK.
// `go test ./activities/ -run '^$' -bench OrderTools -cpuprofile cpu.out`.
func BenchmarkOrderTools(b *testing.B) {
	testenv.Integration(b)
	pool := testenv.Postgres(b)
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel)
	logger := zap.New(logging.Redacting(core))
	store, cipher := evidencetest.Store(b, pool, logger)
	seals, err := commerce.NewSealRing("k1", map[string][]byte{"k1": []byte(strings.Repeat("s", 32))})
	if err != nil {
		b.Fatal(err)
	}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := commerce.RegisterTools(reg, commerce.ToolDeps{Pool: pool, Audit: store, Sealer: cipher, QuoteSeals: seals, Snapshots: store}); err != nil {
		b.Fatal(err)
	}
	// Enough T-shirts that no write ends OUT_OF_STOCK (the bench's own
	// database does the same, worker/scaletest).
	if _, err := pool.Exec(context.Background(), `UPDATE catalog_stock SET on_hand = 1000000, reserved = 0 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		b.Fatal(err)
	}
	tools := &activities.Tools{Invoker: toolkit.NewInvoker(reg, store, logger)}
	var seq atomic.Int64
	order := func(b *testing.B) {
		n := seq.Add(1)
		key := fmt.Sprintf("bench-%d-%d", n, b.N)
		wf := toolkit.CallContext{WorkflowID: "draft-order/u_bench/" + key, RunID: "run-" + key, WorkflowType: "DraftOrder", Attempt: 1}
		req := toolkit.Request{RequestID: "req-" + key, UserID: "u_bench", IdempotencyKey: key, Currency: "EUR",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_bench"}, Client: toolkit.Client{App: "backend", Version: "bench"}}
		in := activities.QuoteInput{
			Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}, Currency: "EUR", ShippingService: commerce.ServiceStandard, Incoterm: commerce.IncotermDDP,
				ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
			ApprovalConfidence: 0.8, Requests: map[string]toolkit.Request{},
		}
		for i, st := range activities.QuoteSteps {
			r := req
			r.CorrelationID = fmt.Sprintf("corr-%016x", n*16+int64(i))
			in.Requests[st.Step] = r
		}
		qc := wf
		qc.ActivityID, qc.ActivityType = "1", "Quote"
		res, err := tools.Quote(toolkit.WithCall(context.Background(), qc), in)
		if err != nil {
			b.Fatal(err)
		}
		env, ok := res.Answer(activities.StepTotal)
		var tot commerce.Total
		if !ok || !env.OK || env.Decode(&tot) != nil {
			b.Fatalf("no total: %+v", res.Calls)
		}
		raw, err := json.Marshal(commerce.CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash, ShipTo: in.Order.ShipTo})
		if err != nil {
			b.Fatal(err)
		}
		wc := wf
		wc.ActivityID, wc.ActivityType = "2", "CallTool"
		r := req
		r.CorrelationID = fmt.Sprintf("corr-%016x", n*16+15)
		out, err := tools.CallTool(toolkit.WithCall(context.Background(), wc),
			activities.CallToolInput{Call: toolkit.ToolCall{Tool: commerce.ToolCreateDraftOrder, Request: r, Input: raw}})
		if err != nil || !out.Envelope.OK {
			b.Fatalf("write: %v %+v", err, out.Envelope.Error)
		}
	}
	order(b) // compiles the schemas, warms the catalogue
	b.ReportAllocs()
	b.ResetTimer()
	began := processCPU()
	for b.Loop() {
		order(b)
	}
	// The process's CPU per order (this one's and the database client's,
	// garbage collection included): the figure a change should move, where
	// ns/op is mostly waiting for PostgreSQL.
	b.ReportMetric(float64((processCPU()-began).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
