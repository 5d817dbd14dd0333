package client

import (
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
)

// TemporalLogger bridges zap into the Temporal SDK's logger, so workflow
// and activity logs (replay-aware through workflow.GetLogger) go through
// the same redacting core.
func TemporalLogger(z *zap.Logger) log.Logger {
	return temporalLogger{z.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

type temporalLogger struct{ s *zap.SugaredLogger }

func (l temporalLogger) Debug(msg string, kv ...any) { l.s.Debugw(msg, kv...) }
func (l temporalLogger) Info(msg string, kv ...any)  { l.s.Infow(msg, kv...) }
func (l temporalLogger) Warn(msg string, kv ...any)  { l.s.Warnw(msg, kv...) }
func (l temporalLogger) Error(msg string, kv ...any) { l.s.Errorw(msg, kv...) }

// With implements log.WithLogger.
func (l temporalLogger) With(kv ...any) log.Logger { return temporalLogger{l.s.With(kv...)} }
