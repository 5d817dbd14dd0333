package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestRefusalThroughTheCLI: a draft order of an unknown SKU ends NOT_FOUND
// (exit 1), and `start --json` and `status --json` carry the pricing
// tool's whole error — the SKU in details, what to do, can_retry — as the
// text output does.
func TestRefusalThroughTheCLI(t *testing.T) {
	stack(t)
	file := filepath.Join(t.TempDir(), "order.json")
	order := `{"request": {"user_id": "u_cli", "currency": "EUR", "client": {"app": "cli"}},
 "items": [{"sku": "NO-SUCH-SKU-CLI", "quantity": 1}],
 "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}}`
	if err := os.WriteFile(file, []byte(order), 0o600); err != nil {
		t.Fatal(err)
	}
	key := freshKey("cli-refusal")
	var started startResult
	r := jsonOut(t, &started, "draft-order", "start", "-f", file, "--key", key)
	if r.code != exitRefused || started.Status == nil {
		t.Fatalf("start: exit %d %+v: %s", r.code, started, r.stderr)
	}
	wantCLIRefusal(t, "start --json", started.Status.Result)

	var st draftorder.Status
	if r := jsonOut(t, &st, "draft-order", "status", started.WorkflowID); r.code != 0 {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	wantCLIRefusal(t, "status --json", st.Result)

	r = runCLI(t, "", "draft-order", "status", started.WorkflowID)
	for _, want := range []string{"NOT_FOUND", `"skus":["NO-SUCH-SKU-CLI"]`, "what to do   remove the unknown items", "can retry    false"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("status text lacks %q:\n%s", want, r.stdout)
		}
	}
}

func wantCLIRefusal(t *testing.T, what string, res *draftorder.Result) {
	t.Helper()
	if res == nil || res.State != draftorder.StateNotFound || res.Error == nil || res.Error.Code != toolkit.NotFound {
		t.Fatalf("%s: result %+v", what, res)
	}
	skus, _ := res.Error.Details["skus"].([]any)
	if len(skus) != 1 || skus[0] != "NO-SUCH-SKU-CLI" || res.Error.RecoverySuggestion == "" || res.Error.CanRetry {
		t.Fatalf("%s: error %+v", what, res.Error)
	}
}
