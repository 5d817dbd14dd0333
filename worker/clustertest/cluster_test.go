package clustertest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// cluster is what the tests know of the running cluster, from its
// environment file.
type cluster struct {
	env     map[string]string
	dir     string
	tlsDir  string
	address string
}

func load(t *testing.T) cluster {
	t.Helper()
	env := testenv.ClusterEnv(t)
	c := cluster{env: env, dir: env["CARTWRIGHT_CLUSTER_DIR"], address: env["TEMPORAL_ADDRESS"]}
	c.tlsDir = filepath.Join(c.dir, "tls")
	return c
}

// port is the cluster's port at offset from the frontend's (the layout of
// scripts/cluster-lib.sh load_cluster).
func (c cluster) port(t *testing.T, offset int) string {
	_, p, _ := strings.Cut(c.address, ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", n+offset)
}

func (c cluster) keyPair(t *testing.T, name string) tls.Certificate {
	t.Helper()
	kp, err := tls.LoadX509KeyPair(filepath.Join(c.tlsDir, name+".crt"), filepath.Join(c.tlsDir, name+".key"))
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func (c cluster) pool(t *testing.T, name string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(c.tlsDir, name+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		t.Fatalf("%s.crt holds no certificate", name)
	}
	return p
}

// dial connects an SDK client with tlsCfg (nil: plaintext) and asks the
// frontend for its health.
func (c cluster) dial(ctx context.Context, tlsCfg *tls.Config) (sdkclient.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tc, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: c.address, Namespace: "default",
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: tlsCfg}, Logger: quiet{}})
	if err != nil {
		return nil, err
	}
	if _, err := tc.CheckHealth(ctx, &sdkclient.CheckHealthRequest{}); err != nil {
		tc.Close()
		return nil, err
	}
	return tc, nil
}

// TestFrontendRefusesWithoutTheClientCertificate is the attack test of the
// cluster's front door: plaintext, TLS without a client certificate, and a
// certificate from a CA of the attacker's own are refused; the client
// certificate `make cluster` issued is let in.
func TestFrontendRefusesWithoutTheClientCertificate(t *testing.T) {
	c := load(t)
	ctx := context.Background()
	roots := c.pool(t, "ca")
	foreign := selfSignedClient(t)
	for _, a := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"plaintext", nil},
		{"TLS without a client certificate", &tls.Config{RootCAs: roots, ServerName: "temporal-frontend"}},
		{"a client certificate of another CA", &tls.Config{RootCAs: roots, ServerName: "temporal-frontend", GetClientCertificate: present(foreign)}},
	} {
		if tc, err := c.dial(ctx, a.cfg); err == nil {
			tc.Close()
			t.Errorf("%s: the frontend answered", a.name)
		} else {
			t.Logf("%s: refused (%s)", a.name, firstLine(err))
		}
	}
	tc, err := c.dial(ctx, &tls.Config{RootCAs: roots, ServerName: "temporal-frontend", Certificates: []tls.Certificate{c.keyPair(t, "client")}})
	if err != nil {
		t.Fatalf("the cluster's own client certificate: %v", err)
	}
	tc.Close()
}

// TestServicesTalkMutualTLSOnly: history and matching serve only TLS and
// only to the internode CA's certificates: plaintext and cartwright's
// client certificate (good at the frontend) are refused; the internode
// certificate is let in. (The worker service serves no gRPC; it dials the
// frontend and history with the internode certificate.)
func TestServicesTalkMutualTLSOnly(t *testing.T) {
	c := load(t)
	internodeRoots := c.pool(t, "internode-ca")
	for svc, off := range map[string]int{"history": 2, "matching": 3} {
		addr := c.port(t, off)
		if err := tlsTalk(addr, nil); err == nil {
			t.Errorf("%s (%s): a plaintext connection was answered", svc, addr)
		}
		client := &tls.Config{RootCAs: internodeRoots, ServerName: "temporal-internode", GetClientCertificate: present(c.keyPair(t, "client"))}
		if err := tlsTalk(addr, client); err == nil {
			t.Errorf("%s (%s): cartwright's client certificate was let in", svc, addr)
		} else {
			t.Logf("%s: client certificate refused (%s)", svc, firstLine(err))
		}
		internode := &tls.Config{RootCAs: internodeRoots, ServerName: "temporal-internode", Certificates: []tls.Certificate{c.keyPair(t, "internode")}}
		if err := tlsTalk(addr, internode); err != nil {
			t.Errorf("%s (%s): the internode certificate: %v", svc, addr, err)
		}
	}
}

// tlsTalk opens a connection to addr (TLS with cfg, or plain TCP when nil)
// and speaks HTTP/2's preface: it succeeds when the server answers with a
// frame, fails when it closes or refuses the handshake. With TLS 1.3 a
// refused client certificate shows on the first read, not the handshake.
func tlsTalk(addr string, cfg *tls.Config) error {
	d := &tlsDialer{addr: addr, cfg: cfg}
	conn, err := d.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		return err
	}
	buf := make([]byte, 9)
	if _, err := io.ReadFull(conn, buf); err != nil {
		return err
	}
	if buf[3] != 0x4 { // a SETTINGS frame: a gRPC server
		return fmt.Errorf("no HTTP/2 SETTINGS frame from %s", addr)
	}
	return nil
}

// TestFourServicesOnPostgres: four live processes, one per service, from
// the pid files `make cluster` keeps; the frontend reports PostgreSQL
// persistence and visibility and at least 4 history shards.
func TestFourServicesOnPostgres(t *testing.T) {
	c := load(t)
	pids := map[string]bool{}
	for _, svc := range []string{"frontend", "history", "matching", "worker"} {
		b, err := os.ReadFile(filepath.Join(c.dir, "pids", svc+".pid"))
		if err != nil {
			t.Fatalf("%s: %v", svc, err)
		}
		pid := strings.TrimSpace(string(b))
		cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
		if err != nil {
			t.Fatalf("%s (pid %s) is not running: %v", svc, pid, err)
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if !strings.HasSuffix(args[0], "temporal-server") || args[len(args)-1] != svc {
			t.Fatalf("%s (pid %s) runs %q", svc, pid, args)
		}
		pids[pid] = true
	}
	if len(pids) != 4 {
		t.Fatalf("four services in %d processes", len(pids))
	}
	tc, err := sdkclient.DialContext(context.Background(), clientOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	info, err := tc.WorkflowService().GetClusterInfo(context.Background(), &workflowservice.GetClusterInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetHistoryShardCount() < 4 || !strings.HasPrefix(info.GetPersistenceStore(), "postgres") ||
		!strings.HasPrefix(info.GetVisibilityStore(), "postgres") {
		t.Fatalf("cluster info: %d shards, persistence %q, visibility %q", info.GetHistoryShardCount(),
			info.GetPersistenceStore(), info.GetVisibilityStore())
	}
	t.Logf("temporal-server %s: %d history shards, persistence %s, visibility %s", info.GetServerVersion(),
		info.GetHistoryShardCount(), info.GetPersistenceStore(), info.GetVisibilityStore())
}

func clientOptions(t *testing.T) sdkclient.Options {
	t.Helper()
	opts, err := client.SDKOptionsFromEnv(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = quiet{}
	return opts
}

// TestDraftOrderThroughTheCluster: a draft order through the frontend, the
// worker `make cluster` runs, and PostgreSQL: one draft_orders row, the
// run found by its search attribute in SQL visibility, and the Web UI
// (over mTLS to the frontend) lists it with the codec endpoint configured.
func TestDraftOrderThroughTheCluster(t *testing.T) {
	c := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	key := "cluster-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	h, err := cl.StartDraftOrder(ctx, draftorder.Input{
		Request: toolkit.Request{UserID: "u_cluster", IdempotencyKey: key, Currency: "EUR",
			Actor:  toolkit.Actor{Type: toolkit.ActorUser, ID: "u_cluster"},
			Client: toolkit.Client{App: "backend", Version: "clustertest"}},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cl.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("no total to confirm: %+v %v", st, err)
	}
	ans, err := cl.ConfirmResult(ctx, h.WorkflowID, st.Confirmation.QuoteHash)
	if err != nil || ans.Result.State != draftorder.StateDraftCreated {
		t.Fatalf("confirm: %+v %v", ans, err)
	}
	pool, err := pgxpool.New(ctx, c.env["CARTWRIGHT_CLUSTER_PG_ADMIN_DSN"])
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders WHERE idempotency_key = $1`, key).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("draft_orders rows for %s: %d %v", key, rows, err)
	}
	query := fmt.Sprintf("WorkflowId = '%s' AND CartwrightFlow = 'draft_order'", h.WorkflowID)
	testenv.WaitFor(t, 30*time.Second, "the run in SQL visibility by its search attribute", func() (bool, error) {
		resp, err := cl.Temporal().ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		return err == nil && len(resp.GetExecutions()) == 1, err
	})

	// The Web UI server, over mTLS to the frontend, lists the run for a
	// signed-in support member (the browser sends the member's access token;
	// docs/operators.md#sign-in-on-the-cluster) and hands the browser the
	// codec endpoint.
	ui := "http://" + c.port(t, 15)
	if c.env["CARTWRIGHT_OIDC_ISSUER"] != "" {
		uiToken = c.staffToken(t, "sam.support")
	}
	defer func() { uiToken = "" }()
	var listed struct {
		Executions []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		} `json:"executions"`
	}
	getJSON(t, ui+"/api/v1/namespaces/default/workflows?query="+url.QueryEscape(query), &listed)
	if len(listed.Executions) != 1 || listed.Executions[0].Execution.WorkflowID != h.WorkflowID {
		t.Fatalf("the Web UI lists %+v for %s", listed, query)
	}
	var settings struct {
		Codec struct{ Endpoint string } `json:"Codec"`
	}
	getJSON(t, ui+"/api/v1/settings", &settings)
	scheme := "http"
	if c.env["CARTWRIGHT_OIDC_ISSUER"] != "" {
		scheme = "https" // the UI passes staff tokens to an https endpoint only
	}
	if want := scheme + "://localhost:" + strings.TrimPrefix(c.port(t, 16), "127.0.0.1:") + "/codec"; settings.Codec.Endpoint != want {
		t.Fatalf("the Web UI's codec endpoint is %q, want %q", settings.Codec.Endpoint, want)
	}
	t.Logf("%s: DRAFT_CREATED, one row, in SQL visibility and the Web UI (codec %s)", h.WorkflowID, settings.Codec.Endpoint)
}

// uiToken is the access token getJSON sends ("" none).
var uiToken string

func getJSON(t *testing.T, u string, into any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if uiToken != "" {
		req.Header.Set("Authorization", "Bearer "+uiToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", u, resp.Status, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, b)
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
