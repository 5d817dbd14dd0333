package wire

import "github.com/cartwright-dev/cartwright/toolkit"

// HeaderCorrelationID carries the correlation id in and out of the HTTP
// gateway (MCP-INV-05/06, docs/mcp.md#correlation-id).
const HeaderCorrelationID = "X-Correlation-ID"

// CorrelationFrom takes the caller's id when it is valid, else makes one:
// one id per request, made once at the entry.
func CorrelationFrom(header string) string {
	if toolkit.ValidCorrelationID(header) {
		return header
	}
	return toolkit.NewCorrelationID()
}
