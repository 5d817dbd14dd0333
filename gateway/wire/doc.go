// Package wire is the MCP gateway's JSON-RPC surface that needs no stack:
// the error codes, categories and closed list of reasons
// (docs/mcp.md#error-codes, docs/mcp.md#reasons), the correlation id
// (docs/mcp.md#correlation-id), and the bounded decoding of a request body,
// fuzzed on its own without the gateway's dependencies.
package wire
