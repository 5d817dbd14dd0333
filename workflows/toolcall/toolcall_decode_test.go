package toolcall

import (
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestInputDecodesStrictly: the worker decodes a
// tool call's input as strictly as the CLI (duplicate keys at any depth,
// unknown fields), keeping the refusal for the workflow rather than failing
// the workflow task. The run's refusal on the real server is
// client.TestToolCallStartedWithoutTheCLIRefusesDuplicateKeys.
func TestInputDecodesStrictly(t *testing.T) {
	for name, raw := range map[string]string{
		"duplicate key in input":    `{"call":{"tool":"pricing.get_realtime_quote","request":{"request_id":"req-unit-0001","actor":{"type":"agent","id":"a"},"user_id":"u_1"},"input":{"currency":"EUR","currency":"USD","items":[{"sku":"TSHIRT-ORG-M-BLK","quantity":1}]}}}`,
		"duplicate key in request":  `{"call":{"tool":"pricing.get_realtime_quote","request":{"request_id":"req-unit-0001","actor":{"type":"agent","id":"a"},"user_id":"u_1","user_id":"u_2"},"input":{}}}`,
		"unknown field in envelope": `{"call":{"tool":"pricing.get_realtime_quote","sudo":true,"request":{"request_id":"req-unit-0001","actor":{"type":"agent","id":"a"},"user_id":"u_1"},"input":{}}}`,
	} {
		var in Input
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			t.Fatalf("%s: decoding failed (it would fail the workflow task): %v", name, err)
		}
		if in.refused == nil || in.refused.Code != toolkit.InvalidArgument || in.Call.Tool == "" {
			t.Fatalf("%s: refused %v, call %+v", name, in.refused, in.Call)
		}
	}
	var in Input
	if err := json.Unmarshal([]byte(`{"call":{"tool":"pricing.get_realtime_quote","request":{"request_id":"r","actor":{"type":"agent","id":"a"},"user_id":"u_1"},"input":{}}}`), &in); err != nil || in.refused != nil {
		t.Fatalf("a clean call is refused: %v %v", err, in.refused)
	}
}
