package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestEnvelopeTextIsShortAndValid: a long answer is cut to a bounded,
// valid UTF-8 text that says where the rest is; a failure names its code
// and recovery.
func TestEnvelopeTextIsShortAndValid(t *testing.T) {
	data, _ := json.Marshal(map[string]string{"text": strings.Repeat("ü", 3000)})
	text := envelopeText(toolkit.Response{OK: true, Status: toolkit.StatusOK, Tool: "knowledge.cite", Data: data})
	if !utf8.ValidString(text) || len(text) > maxTextData+200 || !strings.Contains(text, "structuredContent") {
		t.Fatalf("text of %d bytes, valid %v", len(text), utf8.ValidString(text))
	}
	e := toolkit.Errorf(toolkit.OutOfStock, "only 1 left").WithRecovery("offer 1")
	text = envelopeText(toolkit.Response{Tool: "pricing.get_realtime_quote", Error: e})
	if !strings.Contains(text, "OUT_OF_STOCK: only 1 left") || !strings.Contains(text, "recovery: offer 1") {
		t.Fatalf("failure text %q", text)
	}
}
