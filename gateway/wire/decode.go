package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Limits on what the HTTP gateway decodes; past them a request gets a
// JSON-RPC error, never a panic or an unbounded allocation.
const (
	MaxBodyBytes = 1 << 20
	MaxDepth     = 64
)

// Inbound is one decoded HTTP request body: a JSON-RPC 2.0 message or the
// legacy {"tool": …, "arguments": …} body (MCP-INV-07,
// docs/mcp.md#mcp-invariants).
type Inbound struct {
	Legacy bool
	// id is the raw JSON-RPC id; empty for a notification.
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	// tool and arguments of tools/call (or of the legacy body).
	Tool      string
	Arguments json.RawMessage
}

// Failure is why a body was refused, with the id when one was read.
type Failure struct {
	Reason  Reason
	Message string
	Details map[string]any
	ID      json.RawMessage
}

// requestMethods are the JSON-RPC requests the gateway serves; every other
// request method is METHOD_NOT_FOUND (notifications pass to the SDK).
var requestMethods = map[string]bool{
	"initialize": true, "server/discover": true, "ping": true,
	"tools/list": true, "tools/call": true, "subscriptions/listen": true,
}

// Decode checks a body in the order that gives the clearest error:
// UTF-8, JSON, nesting, batch, then the JSON-RPC shape and tools/call's
// parameters (MCP-INV-01 and -03, docs/mcp.md#mcp-invariants).
func Decode(body []byte) (Inbound, *Failure) {
	fail := func(r Reason, msg string, details map[string]any) (Inbound, *Failure) {
		return Inbound{}, &Failure{Reason: r, Message: msg, Details: details}
	}
	if len(body) > MaxBodyBytes {
		return fail(ReasonRequestTooLarge, "request body over 1 MiB", map[string]any{"limit_bytes": MaxBodyBytes})
	}
	if !utf8.Valid(body) {
		return fail(ReasonParseError, "request body is not valid UTF-8", nil)
	}
	if depth := Nesting(body); depth > MaxDepth {
		return fail(ReasonNestingTooDeep, "JSON nested too deeply", map[string]any{"limit": MaxDepth})
	}
	if !json.Valid(body) {
		return fail(ReasonParseError, "request body is not valid JSON", nil)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return fail(ReasonBatchNotSupported, "batch requests are not supported: send one request per HTTP request", nil)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return fail(ReasonInvalidRequest, "a request must be a JSON object", nil)
	}
	if _, rpc := msg["jsonrpc"]; !rpc {
		if _, legacy := msg["tool"]; legacy {
			return decodeLegacy(msg)
		}
		return fail(ReasonInvalidRequest, `not a JSON-RPC 2.0 request ("jsonrpc": "2.0" missing)`, nil)
	}
	in := Inbound{ID: msg["id"]}
	failID := func(r Reason, m string, d map[string]any) (Inbound, *Failure) {
		return Inbound{}, &Failure{Reason: r, Message: m, Details: d, ID: ValidID(in.ID)}
	}
	var version string
	if json.Unmarshal(msg["jsonrpc"], &version) != nil || version != "2.0" {
		return failID(ReasonInvalidRequest, `"jsonrpc" must be "2.0"`, nil)
	}
	if in.ID != nil && ValidID(in.ID) == nil {
		return failID(ReasonInvalidRequest, `"id" must be a string, a number or null`, nil)
	}
	if json.Unmarshal(msg["method"], &in.Method) != nil || in.Method == "" {
		if _, isResponse := msg["result"]; isResponse {
			return in, nil // a client's answer to a server request: the SDK's
		}
		if _, isResponse := msg["error"]; isResponse {
			return in, nil
		}
		return failID(ReasonInvalidRequest, `"method" must be a non-empty string`, nil)
	}
	in.Params = msg["params"]
	if in.ID == nil { // a notification: no answer is owed
		return in, nil
	}
	if !requestMethods[in.Method] {
		return failID(ReasonMethodNotFound, "method not found: "+in.Method, map[string]any{"method": in.Method})
	}
	if in.Method != "tools/call" {
		return in, nil
	}
	var params map[string]json.RawMessage
	if len(in.Params) == 0 || string(in.Params) == "null" {
		return failID(ReasonMissingRequiredParam, "missing required parameter: name", map[string]any{"param": "name"})
	}
	if json.Unmarshal(in.Params, &params) != nil {
		return failID(ReasonInvalidParamType, "params must be an object", map[string]any{"param": "params"})
	}
	name, ok := params["name"]
	if !ok || string(name) == "null" {
		return failID(ReasonMissingRequiredParam, "missing required parameter: name", map[string]any{"param": "name"})
	}
	if json.Unmarshal(name, &in.Tool) != nil {
		return failID(ReasonInvalidParamType, "name must be a string", map[string]any{"param": "name"})
	}
	if in.Tool == "" {
		return failID(ReasonMissingRequiredParam, "missing required parameter: name", map[string]any{"param": "name"})
	}
	in.Arguments = params["arguments"]
	if !objectOrAbsent(in.Arguments) {
		return failID(ReasonInvalidParamType, "arguments must be an object", map[string]any{"param": "arguments"})
	}
	return in, nil
}

// decodeLegacy reads {"tool": "…", "arguments": {…}}.
func decodeLegacy(msg map[string]json.RawMessage) (Inbound, *Failure) {
	in := Inbound{Legacy: true, Method: "tools/call", Arguments: msg["arguments"]}
	if json.Unmarshal(msg["tool"], &in.Tool) != nil {
		return Inbound{}, &Failure{Reason: ReasonInvalidParamType, Message: "tool must be a string", Details: map[string]any{"param": "tool"}}
	}
	if in.Tool == "" {
		return Inbound{}, &Failure{Reason: ReasonMissingRequiredParam, Message: "missing required parameter: tool", Details: map[string]any{"param": "tool"}}
	}
	if !objectOrAbsent(in.Arguments) {
		return Inbound{}, &Failure{Reason: ReasonInvalidParamType, Message: "arguments must be an object", Details: map[string]any{"param": "arguments"}}
	}
	return in, nil
}

func objectOrAbsent(raw json.RawMessage) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil
}

// ValidID returns id when it is a string, a number or null, else nil.
func ValidID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return nil
	}
	switch v.(type) {
	case nil, string, float64:
		return id
	}
	return nil
}

// Nesting is the deepest array/object nesting of a JSON text (strings are
// skipped), computed without decoding, so a hostile body costs one pass.
func Nesting(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
