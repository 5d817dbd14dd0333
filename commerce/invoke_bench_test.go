package commerce

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/cartwright-dev/cartwright/internal/logging"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// BenchmarkInvokeDraftOrderTools measures the worker's CPU per draft order
// in the invoker (docs/performance.md#one-quote-step): read-only calls of an order
// (pricing, shipping, compliance, duties and taxes) through the
// real registry, schemas, sanitising and the production log core (JSON at
// Info, redacting), on the in-memory stack. Evidence goes to a sink that
// keeps nothing, so the numbers are the pipeline's, not PostgreSQL's.
// One op is one order's five calls; the sub-benchmarks time one tool each.
func BenchmarkInvokeDraftOrderTools(b *testing.B) {
	inv, calls := benchDraftOrder(b)
	ctx := toolkit.WithCall(context.Background(), toolkit.CallContext{
		WorkflowID: "draft-order-u_bench-0001", RunID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		ActivityID: "5", ActivityType: "CallTool", Attempt: 1})
	var seq atomic.Int64
	run := func(b *testing.B, c benchCall) {
		req := toolkit.Request{RequestID: fmt.Sprintf("req-bench-%d", seq.Add(1)), SessionID: "sess-bench",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_bench"}, UserID: "u_bench"}
		if _, err := inv.Invoke(ctx, c.tool, req, c.args); err != nil {
			b.Fatalf("%s: %v", c.tool, err)
		}
	}
	b.Run("order", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range calls {
				run(b, c)
			}
		}
	})
	for _, c := range calls {
		b.Run(c.tool, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				run(b, c)
			}
		})
	}
}

type benchCall struct {
	tool string
	args any
}

// benchDraftOrder builds the invoker with the production log core and the
// five calls of a two-line order from the DE warehouse to a named person
// in Köln, each call's arguments taken from the previous answers as the
// draft order workflow takes them.
func benchDraftOrder(b *testing.B) (*toolkit.Invoker, []benchCall) {
	b.Helper()
	mem, _, _ := newMemEnv(b)
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel)
	inv := toolkit.NewInvoker(mem.Registry(), discardSink{}, zap.New(logging.Redacting(core)))

	ctx := context.Background()
	req := toolkit.Request{RequestID: "req-bench-setup", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_bench"}, UserID: "u_bench"}
	call := func(tool string, args, out any) {
		resp, err := inv.Invoke(ctx, tool, req, args)
		if err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		if err := resp.Decode(out); err != nil {
			b.Fatal(err)
		}
	}
	items := []LineItem{{SKU: "WIN-BDX19-750", Quantity: 2}, {SKU: "KNF-CHEF-20", Quantity: 1}}
	quoteArgs := GetQuoteArgs{Items: items, Currency: "EUR"}
	var q Quote
	call(ToolGetQuote, quoteArgs, &q)
	shipArgs := QuoteShippingArgs{Items: items, Destination: berlin, Currency: "EUR"}
	var sq ShippingQuote
	call(ToolQuoteShipping, shipArgs, &sq)
	opt := sq.Options[0]
	compArgs := CheckComplianceArgs{Items: items, Destination: berlin, TransportMode: opt.TransportMode}
	var v ComplianceVerdict
	call(ToolCheckCompliance, compArgs, &v)
	dutyArgs := DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt, Destination: berlin, Currency: "EUR", Incoterm: IncotermDDP}
	var dt DutiesAndTaxes
	call(ToolDutiesAndTaxes, dutyArgs, &dt)
	return inv, []benchCall{
		{ToolGetQuote, quoteArgs}, {ToolQuoteShipping, shipArgs}, {ToolCheckCompliance, compArgs},
		{ToolDutiesAndTaxes, dutyArgs},
	}
}

// discardSink stands in for the evidence store: an id for every snapshot,
// nothing kept (a benchmark's millions of calls would fill memory).
type discardSink struct{ toolkit.Unstaged }

func (discardSink) RecordStep(context.Context, toolkit.Snapshot) (toolkit.Recorded, error) {
	return toolkit.Recorded{SnapshotID: "ev_bench"}, nil
}
