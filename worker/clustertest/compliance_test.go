package clustertest

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// staffClient is cartwright's client acting as a signed-in staff member:
// the member's access token on every call to Temporal (what the Web UI
// forwards), the payload codec of the environment.
func (c cluster) staffClient(ctx context.Context, t *testing.T, token string) *client.Client {
	t.Helper()
	cl, err := client.New(ctx, client.Options{Temporal: sdkclient.Options{HostPort: c.address, Namespace: "default",
		Credentials: sdkclient.NewAPIKeyStaticCredentials(token),
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: &tls.Config{RootCAs: c.pool(t, "ca"),
			ServerName: "temporal-frontend", Certificates: []tls.Certificate{c.keyPair(t, "client")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestComplianceReviewFollowsTheProvidersGroups: a support member outside
// compliance, signed in with the provider, cannot decide a compliance
// review (the codec server seals the decision with the token's groups, the
// worker refuses FORBIDDEN); once the provider has the member in
// compliance, the member's next sign-in decides it, and the order goes on
// to its total. No second sign-in: the codec server takes the provider's
// token (docs/operators.md#sign-in-on-the-cluster).
func TestComplianceReviewFollowsTheProvidersGroups(t *testing.T) {
	c := load(t)
	c.issuer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
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
	// A basket compliance cannot clear with confidence (a perfume by air).
	in := orderInput("identity-review-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	in.Items = []commerce.LineItem{{SKU: "PRF-ROSE-EDP100", Quantity: 1}}
	in.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	in.ShippingService = "express"
	h, err := backend.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Minute, "the order to wait for a compliance review", func() (bool, error) {
		st, err := backend.Status(ctx, h.WorkflowID)
		return err == nil && st.State == draftorder.StateAwaitingApproval && st.Approvals.Pending != nil, err
	})
	codecURL := c.env["CARTWRIGHT_CODEC_URL"]
	codecHTTP := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.pool(t, "ca")}}}
	decide := func(token string) error {
		_, err := c.staffClient(ctx, t, token).Decide(ctx, h.WorkflowID, "approve", client.ApprovalDecision{
			Reason: "datasheet checked", Sealer: codecserver.SealClient{Endpoint: codecURL, Token: token, HTTP: codecHTTP}})
		return err
	}

	before := c.staffToken(t, "nico.newcomer")
	if err := decide(before); toolkit.CodeOf(err) != toolkit.Forbidden {
		t.Fatalf("a support member outside compliance deciding a compliance review: %v, want FORBIDDEN", err)
	}
	// The provider puts the member in compliance (its directory).
	restore := c.addToGroup(t, "nico.newcomer", "compliance")
	defer restore()
	after := c.staffToken(t, "nico.newcomer")
	if groups, _ := claims(t, after)["groups"].([]any); len(groups) != 2 {
		t.Fatalf("the new token's groups: %v", claims(t, after)["groups"])
	}
	if err := decide(after); err != nil {
		t.Fatalf("the member, now in compliance, deciding: %v", err)
	}
	st, err := backend.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("the approved order does not go on to its total: %+v %v", st, err)
	}
	t.Logf("%s: approved by nico.newcomer once in compliance; total %+v", h.WorkflowID, st.Confirmation)
}

// addToGroup adds user to group in the provider's directory file and
// returns the undo.
func (c cluster) addToGroup(t *testing.T, user, group string) func() {
	t.Helper()
	path := c.usersFile()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(orig), "\n")
	in := false
	for i, l := range lines {
		if strings.Contains(l, "- username: ") {
			in = strings.HasSuffix(strings.TrimSpace(l), " "+user)
		}
		if in && strings.HasPrefix(strings.TrimSpace(l), "groups: [") {
			lines[i] = strings.Replace(l, "]", ", "+group+"]", 1)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return func() { _ = os.WriteFile(path, orig, 0o600) }
}
