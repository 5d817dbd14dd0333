package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// tsClientDir is the Node project of the official TypeScript SDK.
var tsClientDir = filepath.Join("..", "scripts", "mcp-ts")

// tsError is what the TypeScript client read of a refusal.
type tsError struct {
	Kind    string          `json:"kind"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Data    *wire.ErrorData `json:"data"`
}

// TestMCPOfficialTypeScriptClient (docs/mcp.md#http-status): the official
// TypeScript SDK, a client that is not the Go SDK, reads the gateway's
// errors as JSON-RPC errors: -32602 with error.data.reason UNKNOWN_TOOL
// for an unknown tool, not a transport error with only an HTTP status. It
// lists the tools, validates a read tool's structuredContent against its
// outputSchema, reads a tool's refusal as a result with isError, and a
// bad token as a 401. The Node packages come from scripts/mcp-ts.sh setup
// (make test runs it); without them this test fails, it does not skip.
func TestMCPOfficialTypeScriptClient(t *testing.T) {
	s := newStack(t)
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (%v): run scripts/mcp-ts.sh setup", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: run scripts/mcp-ts.sh setup")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "MCP_URL="+s.url, "MCP_TOKEN="+s.token, "MCP_BAD_TOKEN=cwt_not-a-token")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		Tools        []string `json:"tools"`
		UnknownTool  tsError  `json:"unknownTool"`
		BadToken     tsError  `json:"badToken"`
		Cite         struct{ IsError, OK bool }
		BadArguments struct {
			IsError bool   `json:"isError"`
			Code    string `json:"code"`
		} `json:"badArguments"`
		DraftStatus struct {
			IsError bool   `json:"isError"`
			Code    string `json:"code"`
		} `json:"draftStatus"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s (stderr %s)", err, stdout.String(), stderr.String())
	}
	t.Logf("TypeScript client read: %s", stdout.String())
	if !slices.Equal(out.Tools, s.gw.ToolNames()) {
		t.Fatalf("tools/list %v, want %v", out.Tools, s.gw.ToolNames())
	}
	u := out.UnknownTool
	if u.Kind != "jsonrpc" || string(u.Code) != "-32602" || u.Data == nil || u.Data.Reason != wire.ReasonUnknownTool ||
		u.Data.Category != wire.CategoryValidation || !toolkit.ValidCorrelationID(u.Data.CorrelationID) {
		t.Fatalf("unknown tool as read by the TypeScript client: %+v (data %+v)", u, u.Data)
	}
	if out.Cite.IsError || !out.Cite.OK {
		t.Fatalf("knowledge.cite: %+v", out.Cite)
	}
	if !out.BadArguments.IsError || out.BadArguments.Code != string(toolkit.InvalidArgument) {
		t.Fatalf("bad arguments: %+v", out.BadArguments)
	}
	if !out.DraftStatus.IsError || out.DraftStatus.Code != string(toolkit.NotFound) {
		t.Fatalf("draft_order.status of an unknown key: %+v", out.DraftStatus)
	}
	if out.BadToken.Kind != "transport" || string(out.BadToken.Code) != "401" {
		t.Fatalf("bad token: %+v", out.BadToken)
	}
}
