package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestStatusOfATerminatedRun: status of a run that was terminated prints its last
// state, then says the run ended and why, and exits non-zero.
func TestStatusOfATerminatedRun(t *testing.T) {
	s := stack(t)
	key := freshKey("cli-term")
	in := strings.NewReader(`{"request": {"user_id": "u_cli", "currency": "EUR", "client": {"app": "cli"}},
 "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 2}],
 "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}}`)
	var out strings.Builder
	var errOut strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	if code := run(ctx, []string{"draft-order", "start", "-f", "-", "--key", key}, in, &out, &errOut); code != 0 {
		t.Fatalf("start: exit %d: %s", code, errOut.String())
	}
	id := "draft-order/u_cli/" + key
	if err := s.Temporal.TerminateWorkflow(ctx, id, "", "operator test"); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "draft-order", "status", id)
	r.oneLineErr(t, "status of a terminated run", exitCannot, "UPSTREAM_ERROR", "was terminated")
	if !strings.Contains(r.stdout, draftorder.StateNeedsConfirm) {
		t.Fatalf("status of a terminated run: the last state is not printed:\n%s", r.stdout)
	}
}
