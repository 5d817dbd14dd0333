package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gowebpki/jcs"
)

// MaxBodyBytes bounds a tool call body; larger bodies are refused before
// they are parsed.
const MaxBodyBytes = 1 << 20

// ToolCall is a tool call as it arrives from outside (CLI, HTTP, MCP): the
// tool's name, the request envelope and the tool's input.
type ToolCall struct {
	Tool    string          `json:"tool"`
	Request Request         `json:"request"`
	Input   json.RawMessage `json:"input"`
}

// DecodeToolCall parses body strictly: at most MaxBodyBytes, one JSON
// object, no duplicate keys anywhere, no unknown envelope fields. Every
// failure is INVALID_ARGUMENT.
func DecodeToolCall(body []byte) (ToolCall, error) {
	var c ToolCall
	if err := DecodeStrict(body, &c); err != nil {
		return ToolCall{}, err
	}
	if c.Tool == "" {
		return ToolCall{}, Errorf(InvalidArgument, "tool call names no tool").WithDetail("fields", []string{"tool"})
	}
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	return c, nil
}

// DecodeStrict parses body into v with the strictness of DecodeToolCall:
// at most MaxBodyBytes, one JSON object, no duplicate keys at any depth, no
// unknown fields, every field of its type. Every failure is
// INVALID_ARGUMENT, naming the field where there is one (details.field).
func DecodeStrict(body []byte, v any) error {
	if len(body) > MaxBodyBytes {
		return Errorf(InvalidArgument, "body is larger than %d bytes", MaxBodyBytes)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Errorf(InvalidArgument, "body must be one JSON object")
	}
	// JCS rejects duplicate keys at every depth (RFC 8785 §3.1), which
	// encoding/json silently resolves to the last one.
	if _, err := jcs.Transform(trimmed); err != nil {
		return Errorf(InvalidArgument, "body is not valid JSON: %s", firstLine(err.Error()))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeDecodeError(err)
	}
	if dec.More() {
		return Errorf(InvalidArgument, "body holds more than one JSON value")
	}
	return nil
}

// describeDecodeError names the offending field: "field items.quantity
// must be int64, not a JSON string", "unknown field \"sudo\"".
func describeDecodeError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		want := typeErr.Type.String()
		if want == "time.Duration" {
			want = "a duration in nanoseconds (e.g. 1800000000000 for 30m)"
		}
		return Errorf(InvalidArgument, "field %s must be %s, not a JSON %s", typeErr.Field, want, typeErr.Value).
			WithDetail("field", typeErr.Field)
	}
	msg := strings.TrimPrefix(firstLine(err.Error()), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		name := strings.Trim(f, `"`)
		return Errorf(InvalidArgument, "unknown field %q", name).WithDetail("field", name)
	}
	return Errorf(InvalidArgument, "body does not match: %s", msg)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	if len(s) > 200 {
		return s[:200]
	}
	return s
}
