package evidence

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkSnapshotWrite measures Record against the real database:
// single (one goroutine, one chain), parallel over distinct workflows (the
// normal case: each workflow its own chain), and parallel into one
// workflow (every writer waits for the chain lock). One op = one snapshot.
func BenchmarkSnapshotWrite(b *testing.B) {
	s, _ := newTestStore(b)
	ctx := ctxT(b)
	payload := map[string]any{"quote_id": "q_123", "total_minor": 125000, "currency": "EUR",
		"lines": []map[string]any{{"sku": "A-1", "qty": 2, "unit_minor": 50000}, {"sku": "B-2", "qty": 1, "unit_minor": 25000}}}
	var seq atomic.Int64

	b.Run("single", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := int(seq.Add(1))
			if _, err := s.Record(ctx, snapshot(b, "bench-single", n, payload)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("parallel_workflows", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			wf := fmt.Sprintf("bench-par-%d", seq.Add(1))
			for pb.Next() {
				if _, err := s.Record(ctx, snapshot(b, wf, int(seq.Add(1)), payload)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("parallel_one_workflow", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Record(ctx, snapshot(b, "bench-one", int(seq.Add(1)), payload)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
}

// BenchmarkSignRow is what signing adds to a row the store stages: its
// content hash in format 3 and one Ed25519 signature
// (docs/evidence.md#row-signatures); BenchmarkVerifyRowSignature what
// checking it costs verify, the audit and reconcile.
func BenchmarkSignRow(b *testing.B) {
	signer := testSigner(b, WriterWorker)
	r := sampleRecord()
	b.ReportAllocs()
	for b.Loop() {
		if err := signer.signRow(&r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyRowSignature(b *testing.B) {
	signer := testSigner(b, WriterWorker)
	r := sampleRecord()
	if err := signer.signRow(&r); err != nil {
		b.Fatal(err)
	}
	auth := authorship{keys: RowKeysOf(signer)}
	b.ReportAllocs()
	for b.Loop() {
		if kind, d := auth.check(&r); kind != "" {
			b.Fatal(kind, d)
		}
	}
}
