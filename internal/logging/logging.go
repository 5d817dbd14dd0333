package logging

import (
	"fmt"

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
func Redacting(core zapcore.Core) zapcore.Core { return redactingCore{core} }

type redactingCore struct{ zapcore.Core }

func (c redactingCore) With(fields []zapcore.Field) zapcore.Core {
	return redactingCore{c.Core.With(redactFields(fields))}
}

func (c redactingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c redactingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = toolkit.SanitizeText(e.Message)
	return c.Core.Write(e, redactFields(fields))
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
