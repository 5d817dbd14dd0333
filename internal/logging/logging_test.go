package logging_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/logging"
)

// TestLogsNeverCarryRawPIIOrSecrets writes every sensitive class through
// message, string, error, stringer and reflected fields, through the zap
// logger and through the Temporal SDK bridge, then reads every line back.
func TestLogsNeverCarryRawPIIOrSecrets(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(logging.Redacting(core))
	bridge := client.TemporalLogger(logger)
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

// sensitiveCases is one value of every class the sanitiser masks (the
// sanitiser's own tests hold the full table with the expected warnings).
var sensitiveCases = []struct{ class, text, secret string }{
	{"stripe secret key", "key is sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
	{"webhook secret", "whsec_abcdefgh12345678 here", "whsec_abcdefgh12345678"},
	{"bearer token", "Authorization: Bearer abc.def-ghi_jkl123", "abc.def-ghi_jkl123"},
	{"url user info", "postgres://admin:hunter2@db.internal:5432/app", "hunter2"},
	{"email", "contact jane.doe+shop@example.co.uk today", "jane.doe+shop@example.co.uk"},
	{"phone international", "call +49 30 1234 5678 now", "1234 5678"},
	{"card number", "card 4242 4242 4242 4242 exp 12/30", "4242 4242 4242 4242"},
	{"us ssn", "ssn 078-05-1120", "078-05-1120"},
}
