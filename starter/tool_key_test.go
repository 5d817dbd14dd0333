package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// toolCallOut is what `starter --json tool call` prints.
type toolCallOut struct {
	WorkflowID string           `json:"workflow_id"`
	Attached   bool             `json:"attached"`
	Envelope   toolkit.Response `json:"envelope"`
}

// writeCall writes one tool call file.
func writeCall(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "call.json")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestToolCallKeyMeansOneRequest: through `starter tool call`, the same
// key for another Stripe account is CONFLICT (exit 1, the first request's
// digest in details), never the first account's link; an input its
// schema refuses (quantity 0) starts no workflow (exit 2), and the
// corrected call with the same request id runs (docs/envelope.md#idempotency).
func TestToolCallKeyMeansOneRequest(t *testing.T) {
	stack(t)
	key := freshKey("cli-key")
	link := func(acct string) string {
		return writeCall(t, `{"tool": "stripe.create_login_link",
  "request": {"request_id": "req-`+key+`", "idempotency_key": "`+key+`", "actor": {"type": "agent", "id": "shop-agent"}, "user_id": "u_cli"},
  "input": {"stripe_account_id": "`+acct+`"}}`)
	}
	var first toolCallOut
	if r := jsonOut(t, &first, "tool", "call", "-f", link("acct_1CwJaneCrafts001")); r.code != 0 || !first.Envelope.OK {
		t.Fatalf("first call: exit %d %+v: %s", r.code, first.Envelope.Error, r.stderr)
	}
	var second toolCallOut
	r := jsonOut(t, &second, "tool", "call", "-f", link("acct_1CwAcmeGoods0001"))
	e := second.Envelope.Error
	if r.code != exitRefused || second.Envelope.OK || e == nil || e.Code != toolkit.Conflict ||
		e.Details["reason"] != "arguments differ" || e.Details["first_request_digest"] == nil || !strings.Contains(r.stderr, "CONFLICT") {
		t.Fatalf("other account, same key: exit %d %+v: %s", r.code, second.Envelope, r.stderr)
	}

	qkey := freshKey("cli-schema")
	quote := func(qty string) string {
		return writeCall(t, `{"tool": "pricing.get_realtime_quote",
  "request": {"request_id": "`+qkey+`", "actor": {"type": "agent", "id": "shop-agent"}, "user_id": "u_cli", "currency": "EUR"},
  "input": {"currency": "EUR", "items": [{"sku": "TEE-ORG-M-WHT", "quantity": `+qty+`}]}}`)
	}
	r = runCLI(t, "", "tool", "call", "-f", quote("0"))
	if r.code != exitCannot || !strings.Contains(r.stderr, "INVALID_ARGUMENT") || strings.Contains(r.stdout, "tool-call/") {
		t.Fatalf("quantity 0: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var fixed toolCallOut
	if r := jsonOut(t, &fixed, "tool", "call", "-f", quote("1")); r.code != 0 || !fixed.Envelope.OK || fixed.Attached {
		t.Fatalf("the corrected call: exit %d %+v attached=%v: %s", r.code, fixed.Envelope.Error, fixed.Attached, r.stderr)
	}
}
