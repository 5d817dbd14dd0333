package logging

import (
	"fmt"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// NewLogger builds the process logger. Every line passes through a core
// that masks secrets and redacts PII in the message and in every string or
// error field, so a careless field cannot leak what must never be logged
// (docs/privacy.md#logs).
func NewLogger(level string, development bool) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	if development {
		cfg = zap.NewDevelopmentConfig()
	}
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.DisableStacktrace = !development
	return cfg.Build(zap.WrapCore(Redacting))
}

// Redacting wraps a zap core so every entry is sanitised before it is written.
func Redacting(core zapcore.Core) zapcore.Core { return &redactingCore{root: core, core: core} }

// redactingCore sanitises the message and fields of every line it writes.
// The fields a logger is built With are redacted when its first line is
// written, not when it is built: the Temporal SDK and the invoker build a
// logger per task and per call, and most of the SDK's never
// write a line (Debug is off). A logger that writes no line never shows
// its fields, so redacting them late changes no line that is written.
type redactingCore struct {
	// root is the core Redacting wrapped: With adds fields and keeps the
	// level and the output, so level checks and Sync ask it.
	root zapcore.Core
	// parent is the core this one was built from With while its fields
	// wait for the first line, else nil. Only immutable values wait
	// (deferrable), so a line shows them as they were at With.
	parent *redactingCore
	fields []zapcore.Field

	once sync.Once
	core zapcore.Core // root with every field of the chain, redacted
}

// inner is the wrapped core with this logger's fields, built once.
func (c *redactingCore) inner() zapcore.Core {
	if c.parent != nil {
		c.once.Do(func() {
			c.core, c.fields = c.parent.inner().With(redactFields(c.fields)), nil
		})
	}
	return c.core
}

func (c *redactingCore) Enabled(l zapcore.Level) bool { return c.root.Enabled(l) }

func (c *redactingCore) Sync() error { return c.root.Sync() }

func (c *redactingCore) With(fields []zapcore.Field) zapcore.Core {
	if !deferrable(fields) {
		// A stringer, an error, an object is read now, as before.
		return &redactingCore{root: c.root, core: c.inner().With(redactFields(fields))}
	}
	// A copy: the caller may reuse its slice.
	return &redactingCore{root: c.root, parent: c, fields: append([]zapcore.Field(nil), fields...)}
}

func (c *redactingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *redactingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = toolkit.SanitizeText(e.Message)
	return c.inner().Write(e, redactFields(fields))
}

// deferrable reports whether every field holds a value that cannot change
// after With (a string, a number, a bool, a time): redacting it later
// gives the line it would have given then.
func deferrable(fields []zapcore.Field) bool {
	for _, f := range fields {
		switch f.Type {
		case zapcore.StringType, zapcore.BoolType, zapcore.Int64Type, zapcore.Int32Type, zapcore.Int16Type,
			zapcore.Int8Type, zapcore.Uint64Type, zapcore.Uint32Type, zapcore.Uint16Type, zapcore.Uint8Type,
			zapcore.UintptrType, zapcore.Float64Type, zapcore.Float32Type, zapcore.DurationType, zapcore.TimeType,
			zapcore.TimeFullType, zapcore.SkipType:
		default:
			return false
		}
	}
	return true
}

func redactFields(fields []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(fields))
	for i, f := range fields {
		switch {
		case toolkit.IsSecretField(f.Key):
			out[i] = zap.String(f.Key, toolkit.SecretMask)
		case f.Type == zapcore.StringType:
			out[i] = zap.String(f.Key, toolkit.SanitizeText(f.String))
		case f.Type == zapcore.ErrorType:
			out[i] = zap.String(f.Key, toolkit.SanitizeText(f.Interface.(error).Error()))
		case f.Type == zapcore.StringerType:
			out[i] = zap.String(f.Key, toolkit.SanitizeText(fmt.Sprint(f.Interface)))
		case f.Type == zapcore.ReflectType:
			out[i] = zap.String(f.Key, toolkit.SanitizeText(fmt.Sprintf("%+v", f.Interface)))
		default:
			out[i] = f
		}
	}
	return out
}
