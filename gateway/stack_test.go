package gateway_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client/codec/codectest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// stack is the real stack (dev server, PostgreSQL, stripe-mock, an
// in-process worker with every tool) plus the gateway on a 127.0.0.1 port.
type stack struct {
	*wiringtest.Stack
	gw     *gateway.Gateway
	client *client.Client
	tokens *gateway.Tokens
	// issuer is the token table as the operators' issuing role holds it
	// (the gateway's own, tokens, only reads).
	issuer *gateway.Tokens
	url    string
	// token is an agent token allowed every tool.
	token string
	actor gateway.Actor
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st := wiringtest.Start(t)
	st.Env(t)
	return gatewayOn(t, st)
}

// newBenchStack is newStack for a benchmark (b.Setenv is not available
// where Env needs a *testing.T): the client is pointed at the stack
// explicitly.
func newBenchStack(b *testing.B) *stack {
	b.Helper()
	st := wiringtest.Start(b)
	for k, v := range map[string]string{"TEMPORAL_ADDRESS": testenv.TemporalAddress(), "TEMPORAL_NAMESPACE": "default",
		"CARTWRIGHT_TASK_QUEUE": st.TaskQueue, "CARTWRIGHT_PG_DSN": st.DSN, "CARTWRIGHT_PAYLOAD_KEYS": codectest.Spec(),
		"CARTWRIGHT_SEAL_KEYS": sealtest.Spec()} {
		b.Setenv(k, v)
	}
	return gatewayOn(b, st)
}

func gatewayOn(t testing.TB, st *wiringtest.Stack) *stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	c, err := client.New(ctx, client.Options{Temporal: sdkclient.Options{HostPort: testenv.TemporalAddress()}, TaskQueue: st.TaskQueue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tokens := gateway.NewTokens(st.Pool)
	gw, err := gateway.New(gateway.Options{
		Client: c, Tokens: tokens, Specs: st.Deps.Registry.Specs(), Schemas: schemas.FS,
		Config: wiringtest.Config(st.TaskQueue, st.EvidenceKey), ProgressEvery: 200 * time.Millisecond,
		Direct: &gateway.DirectReads{Invoker: st.Deps.Invoker, Evidence: st.Deps.Evidence},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, gw)
	s := &stack{Stack: st, gw: gw, client: c, tokens: tokens, url: srv.URL + gateway.Path,
		issuer: gateway.NewTokens(testenv.IssuerPool(t, st.DSN))}
	nt := s.newToken(t, gateway.Actor{ID: "test-agent", CallsPerMinute: 10000, BytesPerMinute: 1 << 26})
	s.token, s.actor = nt.Token, nt.Actor
	return s
}

// serve runs the gateway's own HTTP server (its timeouts and header cap)
// on a 127.0.0.1 port.
func serve(t testing.TB, gw *gateway.Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = gw.HTTPServer()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func (s *stack) newToken(t testing.TB, a gateway.Actor) gateway.NewToken {
	t.Helper()
	nt, err := s.issuer.Create(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

// bearer adds the token to every request of the SDK's client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session with the official SDK's client over
// streamable HTTP.
func (s *stack) connect(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "cartwright-test", Version: "0.0.1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(10*time.Second))
	defer cancel()
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// call runs one tools/call and returns the result and the envelope it holds.
func call(t testing.TB, sess *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, toolkit.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(90*time.Second))
	defer cancel()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var env toolkit.Response
	remarshal(t, res.StructuredContent, &env)
	return res, env
}

func remarshal(t testing.TB, from, to any) {
	t.Helper()
	raw, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, to); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}

func newKey(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func corrOf(res *mcp.CallToolResult) string {
	c, _ := res.Meta["correlation_id"].(string)
	return c
}
