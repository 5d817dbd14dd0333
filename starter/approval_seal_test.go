package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestApprovedOrderIsSealedOnTheApproval: a basket compliance could not
// clear becomes a draft order only through the staff approval — the total
// is sealed on the compliance answer and the approval's snapshot, the write
// checks both, and the audit of the run is clean
// (docs/quote-seals.md#what-the-write-checks).
func TestApprovedOrderIsSealedOnTheApproval(t *testing.T) {
	s := stack(t)
	order := `{"request": {"user_id": "u_cli", "currency": "EUR"}, "items": [{"sku": "PRF-ROSE-EDP100", "quantity": 1}],
 "ship_to": {"name": "Jean Dupont", "line1": "12 Rue de Rivoli", "city": "Paris", "postal_code": "75001", "country": "FR"},
 "shipping_service": "express"}`
	r := runCLI(t, order, "draft-order", "start", "-f", "-", "--key", freshKey("cli-sealed-apr"))
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateAwaitingApproval) {
		t.Fatalf("start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(r.stdout[strings.Index(r.stdout, "workflow id"):])[2]
	t.Setenv("CARTWRIGHT_CODEC_URL", s.ServeCodec(t))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(s.StaffToken(t, "bob.compliance")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "draft-order", "approve", id, "--token-file", tokenFile, "--reason", "DG service booked")
	i := strings.Index(r.stdout, "draft-order confirm ")
	if r.code != 0 || i < 0 {
		t.Fatalf("approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	confirm := strings.Fields(r.stdout[i:])
	if len(confirm) < 5 || confirm[3] != "--quote-hash" {
		t.Fatalf("confirm command %v", confirm)
	}
	r = runCLI(t, "", "draft-order", "confirm", id, "--quote-hash", confirm[4])
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateDraftCreated) {
		t.Fatalf("confirm after approval: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, "", "audit", id); r.code != 0 {
		t.Fatalf("audit of the approved order: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
