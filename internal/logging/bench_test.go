package logging_test

import (
	"io"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/cartwright-dev/cartwright/internal/logging"
)

// BenchmarkWith is the invoker's per-call logger (seven fields of ids) on
// the production core at Info: "silent" adds the fields and writes no line
// (the Temporal SDK's per-task loggers, whose Debug lines are off),
// "written" writes two Info lines through it, as every tool call does.
func BenchmarkWith(b *testing.B) {
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel)
	logger := zap.New(logging.Redacting(core))
	with := func() *zap.Logger {
		return logger.With(zap.String("tool", "tax.estimate_duties_and_taxes"), zap.String("request_id", "req-8f14e45f-ceea-167a"),
			zap.String("session_id", "sess-c9f0f895fb98ab91"), zap.String("correlation_id", "corr-45c48cce2e2d7fbd"),
			zap.String("workflow_id", "draft-order-u_42-checkout-0001"), zap.String("activity_id", "5"), zap.Int32("iteration", 1))
	}
	b.Run("silent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			with().Debug("tool call")
		}
	})
	b.Run("written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l := with()
			l.Info("tool call", zap.String("event", "agent_tool_call"), zap.String("status", "running"))
			l.Info("tool call done", zap.String("event", "agent_tool_done"), zap.Int64("duration_ms", 3), zap.String("status", "completed"))
		}
	})
}
