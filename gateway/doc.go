// Package gateway is cartwright's MCP server (docs/mcp.md): agents list
// every registered tool and call it over MCP, each call run durably through
// the tool call workflow with the whole invoker pipeline and its evidence,
// and drive draft orders (start, status, confirm, cancel). It is built on
// the official Go SDK (github.com/modelcontextprotocol/go-sdk): Handler
// serves streamable HTTP at /mcp behind a small front handler that enforces
// what the SDK leaves to us (bearer tokens, body limits, the error data of
// docs/mcp.md#error-data, the legacy body), and ServeStdio speaks MCP over
// stdin/stdout for local agent hosts. Bearer tokens map to agent actors in
// table mcp_tokens (docs/mcp.md#callers). The wire format of errors and the
// request decoding are package gateway/wire.
package gateway
