package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestMCPStdio: the SDK's client launches `starter mcp stdio` (built here)
// as an MCP host would, lists the tools and calls one; the same binary's
// `starter mcp serve` answers over HTTP; without a valid token every stdio
// call is -32002 (AUTH_FAILED, or ACTOR_UNKNOWN without any token).
func TestMCPStdio(t *testing.T) {
	s := newStack(t)
	bin := filepath.Join(t.TempDir(), "starter")
	build := exec.Command("go", "build", "-o", bin, "github.com/cartwright-dev/cartwright/starter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build starter: %v\n%s", err, out)
	}
	connect := func(token string) *mcp.ClientSession {
		cmd := exec.Command(bin, "mcp", "stdio")
		cmd.Env = append(os.Environ(), "CARTWRIGHT_MCP_TOKEN="+token, "CARTWRIGHT_LOG_LEVEL=warn")
		cmd.Stderr = os.Stderr
		c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0.0.1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
		defer cancel()
		sess, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sess.Close() })
		return sess
	}
	sess := connect(s.token)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	list, err := sess.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != len(s.gw.ToolNames()) {
		t.Fatalf("tools/list over stdio: %v, %d tools, want %d", err, len(list.Tools), len(s.gw.ToolNames()))
	}
	res, env := call(t, sess, "knowledge.cite", map[string]any{"claim": "Stripe needs a bank account for payouts"})
	if res.IsError || !env.OK || env.SnapshotID() == "" {
		t.Fatalf("call over stdio: %+v", env)
	}
	rec, err := s.Store.Get(ctx, env.SnapshotID())
	if err != nil || rec.CorrelationID != corrOf(res) {
		t.Fatalf("evidence %v: correlation %q, result's %q", err, rec.CorrelationID, corrOf(res))
	}

	// The same binary serves streamable HTTP: `starter mcp serve`.
	serve := exec.Command(bin, "mcp", "serve", "--addr", "127.0.0.1:0")
	serve.Env = append(os.Environ(), "CARTWRIGHT_LOG_LEVEL=warn")
	serve.Stderr = os.Stderr
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(os.Interrupt); _ = serve.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	url := strings.Fields(strings.TrimPrefix(line, "MCP gateway on "))
	if err != nil || len(url) == 0 || !strings.HasSuffix(url[0], gateway.Path) {
		t.Fatalf("serve printed %q (%v)", line, err)
	}
	httpSess := (&stack{url: url[0]}).connect(t, s.token, nil)
	if list, err := httpSess.ListTools(ctx, nil); err != nil || len(list.Tools) != len(s.gw.ToolNames()) {
		t.Fatalf("tools/list from starter mcp serve: %v", err)
	}

	bad := connect("cwt_unknown")
	_, err = bad.CallTool(ctx, &mcp.CallToolParams{Name: "knowledge.cite", Arguments: map[string]any{"claim": "x y z"}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != wire.CodeBusiness || reasonOf(t, je) != wire.ReasonAuthFailed {
		t.Fatalf("unknown token over stdio: %v", err)
	}
	_, err = connect("").ListTools(ctx, nil)
	if !errors.As(err, &je) || je.Code != wire.CodeBusiness || reasonOf(t, je) != wire.ReasonActorUnknown {
		t.Fatalf("no token over stdio: %v", err)
	}
}

// TestMCPCallBudget: past its calls per minute an actor gets RATE_LIMITED
// with retry_after_seconds, before anything runs; other actors are not
// affected.
func TestMCPCallBudget(t *testing.T) {
	s := newStack(t)
	small := s.newToken(t, gateway.Actor{ID: "small-agent", CallsPerMinute: 2})
	sess := s.connect(t, small.Token, nil)
	args := map[string]any{"claim": "Stripe needs a bank account for payouts"}
	for i := 0; i < 2; i++ {
		if res, env := call(t, sess, "knowledge.cite", args); res.IsError {
			t.Fatalf("call %d within the budget: %+v", i, env.Error)
		}
	}
	res, env := call(t, sess, "knowledge.cite", args)
	if !res.IsError || env.Error == nil || env.Error.Code != toolkit.RateLimited || env.Error.RetryAfterSeconds < 1 || env.SnapshotID() != "" {
		t.Fatalf("third call: isError %v %+v", res.IsError, env.Error)
	}
	if res, _ := call(t, s.connect(t, s.token, nil), "knowledge.cite", args); res.IsError {
		t.Fatal("another actor was limited too")
	}
}

func reasonOf(t *testing.T, je *jsonrpc.Error) wire.Reason {
	t.Helper()
	var d wire.ErrorData
	if err := json.Unmarshal(je.Data, &d); err != nil || !toolkit.ValidCorrelationID(d.CorrelationID) {
		t.Fatalf("error.data %s: %v", je.Data, err)
	}
	return d.Reason
}
