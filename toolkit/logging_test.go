package toolkit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLogsNeverCarryRawPIIOrSecrets writes every sensitive class through
// message, string, error, stringer and reflected fields, through the zap
// logger and through the Temporal SDK bridge, then reads every line back.
func TestLogsNeverCarryRawPIIOrSecrets(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(Redacting(core))
	bridge := TemporalLogger(logger)
	for _, tc := range sensitiveCases {
		logger.Info("saw "+tc.text,
			zap.String("detail", tc.text),
			zap.Error(errors.New("upstream said: "+tc.text)),
			zap.Any("payload", map[string]string{"text": tc.text}),
		)
		bridge.Warn("sdk line "+tc.text, "detail", tc.text)
		logger.With(zap.String("scoped", tc.text)).Debug("scoped line")
	}
	logger.Info("credential field", zap.String("password", "hunter2-plain"), zap.String("authorization", "Basic Zm9vOmJhcg=="))

	var all strings.Builder
	for _, e := range logs.All() {
		all.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			all.WriteString(" " + k + "=")
			all.WriteString(strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " ")))
		}
		all.WriteString("\n")
	}
	text := all.String()
	for _, tc := range sensitiveCases {
		if strings.Contains(text, tc.secret) {
			t.Errorf("%s reached a log line", tc.class)
		}
	}
	for _, s := range []string{"hunter2-plain", "Zm9vOmJhcg=="} {
		if strings.Contains(text, s) {
			t.Errorf("credential %q reached a log line", s)
		}
	}
	if logs.Len() != 3*len(sensitiveCases)+1 {
		t.Fatalf("expected every line to be written, got %d", logs.Len())
	}
}

func toString(v any) string { return fmt.Sprint(v) }
