package clustertest

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestStaffSignInAndDecideInTheBrowser: in Chromium, a compliance officer
// opens the cluster's Web UI, signs in on the provider's own login page,
// finds the order waiting for its compliance review and approves it from
// the Send a Signal form (scripts/ui/cluster-ui.mjs); the order goes on to
// its total. make test-cluster installs the browser first
// (scripts/test-ui.sh setup) and sets CARTWRIGHT_CLUSTER_UI_TEST=1, so
// there the test never skips.
func TestStaffSignInAndDecideInTheBrowser(t *testing.T) {
	c := load(t)
	c.issuer(t)
	if _, err := os.Stat("../../scripts/ui/node_modules/puppeteer-core"); err != nil || os.Getenv("CARTWRIGHT_CLUSTER_UI_TEST") != "1" {
		if os.Getenv("CARTWRIGHT_CLUSTER_UI_TEST") == "1" {
			t.Fatalf("the browser test needs scripts/ui's packages (scripts/test-ui.sh setup): %v", err)
		}
		t.Skip("browser test: make test-cluster runs it (CARTWRIGHT_CLUSTER_UI_TEST=1, after scripts/test-ui.sh setup)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(4*time.Minute))
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	backend, err := client.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	in := orderInput("identity-browser-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	in.Items = []commerce.LineItem{{SKU: "PRF-ROSE-EDP100", Quantity: 1}}
	in.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	in.ShippingService = "express"
	h, err := backend.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	var st draftorder.Status
	testenv.WaitFor(t, time.Minute, "the order to wait for a compliance review", func() (bool, error) {
		st, err = backend.Status(ctx, h.WorkflowID)
		return err == nil && st.State == draftorder.StateAwaitingApproval && st.Approvals.Pending != nil, err
	})
	shots := filepath.Join(c.dir, "ui-shots")
	if err := os.MkdirAll(shots, 0o700); err != nil {
		t.Fatal(err)
	}
	officer := c.user(t, "cora.compliance")
	node := exec.CommandContext(ctx, "node", "cluster-ui.mjs")
	node.Dir = "../../scripts/ui"
	node.Env = append(os.Environ(), "UI_URL=http://localhost:"+strings.TrimPrefix(c.port(t, 15), "127.0.0.1:"),
		"ISSUER_URL="+c.issuer(t), "STAFF_USER="+officer.Username, "STAFF_PASSWORD="+officer.Password,
		"WORKFLOW_ID="+h.WorkflowID, "RUN_ID="+h.RunID, "APPROVAL_ID="+st.Approvals.Pending.ApprovalID,
		"SHOTS_DIR="+shots, "FAILURE_SHOT="+filepath.Join(shots, "failure.png"),
		// Chromium trusts the codec server's and the provider's keys alone
		// (the cluster's CA is no browser's).
		"TRUSTED_SPKI="+spkiOf(t, filepath.Join(c.tlsDir, "codec-server.crt"))+","+spkiOf(t, filepath.Join(c.tlsDir, "idp.crt")))
	out, err := node.CombinedOutput()
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser path failed: %v", err)
	}
	next, err := backend.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || next.Confirmation == nil {
		t.Fatalf("the order approved in the browser does not go on to its total: %+v %v", next, err)
	}
}

// spkiOf is the base64 SHA-256 of a certificate's public key, as Chromium's
// --ignore-certificate-errors-spki-list takes it.
func spkiOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}
