package logging_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/internal/logging"
)

// countingCore counts the With calls that reach the wrapped core.
type countingCore struct {
	zapcore.Core
	withs *atomic.Int32
}

func (c countingCore) With(f []zapcore.Field) zapcore.Core {
	c.withs.Add(1)
	return countingCore{c.Core.With(f), c.withs}
}

func newCounted(level zapcore.Level) (*zap.Logger, *observer.ObservedLogs, *atomic.Int32) {
	core, logs := observer.New(level)
	withs := &atomic.Int32{}
	return zap.New(logging.Redacting(countingCore{core, withs})), logs, withs
}

// A logger's fields reach the wrapped core (redacted) with its first
// written line, once, and never for a logger whose lines are all off.
func TestWithFieldsAreRedactedWhenALineIsWritten(t *testing.T) {
	logger, logs, withs := newCounted(zapcore.InfoLevel)
	l := logger.With(zap.String("detail", "mail jane.doe@example.com"), zap.Int("n", 1))
	l.Debug("off")
	if withs.Load() != 0 || logs.Len() != 0 {
		t.Fatalf("a logger that wrote nothing reached the core: %d With calls, %d lines", withs.Load(), logs.Len())
	}
	l.Info("on")
	l.Info("again")
	l.With(zap.String("step", "2")).Info("nested")
	if withs.Load() != 2 {
		t.Fatalf("%d With calls, want one per logger that wrote", withs.Load())
	}
	lines := logs.All()
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, e := range lines {
		m := e.ContextMap()
		if m["detail"] != "mail [redacted:email]" || m["n"] != int64(1) {
			t.Fatalf("%s: fields %v", e.Message, m)
		}
	}
	if got := lines[2].Context; len(got) != 3 || got[0].Key != "detail" || got[1].Key != "n" || got[2].Key != "step" {
		t.Fatalf("nested fields out of order: %v", got)
	}
}

type mutable struct{ v string }

func (m *mutable) String() string { return m.v }

// A line shows every field as it was at With: a stringer is read at With,
// and a slice the caller reuses afterwards changes nothing.
func TestWithFieldsKeepTheirValueAtWith(t *testing.T) {
	logger, logs, _ := newCounted(zapcore.InfoLevel)
	m := &mutable{"before +49 30 1234 5678"}
	fields := []zap.Field{zap.String("x", "1")}
	a := logger.With(zap.Stringer("s", m))
	b := logger.With(fields...)
	m.v, fields[0] = "after", zap.String("x", "2")
	a.Info("a")
	b.Info("b")
	got := logs.All()
	if s := got[0].ContextMap()["s"]; s != "before [redacted:phone]" {
		t.Fatalf("stringer logged as %q", s)
	}
	if x := got[1].ContextMap()["x"]; x != "1" {
		t.Fatalf("reused slice logged as %q", x)
	}
}

// Many goroutines writing through one new logger build its core once.
func TestWithIsBuiltOnceUnderConcurrentWrites(t *testing.T) {
	logger, logs, withs := newCounted(zapcore.InfoLevel)
	l := logger.With(zap.String("token", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				l.Info("line")
			}
		}()
	}
	wg.Wait()
	if withs.Load() != 1 || logs.Len() != 400 {
		t.Fatalf("%d With calls, %d lines", withs.Load(), logs.Len())
	}
	for _, e := range logs.All() {
		if e.ContextMap()["token"] != "***" {
			t.Fatalf("token logged as %v", e.ContextMap()["token"])
		}
	}
}
