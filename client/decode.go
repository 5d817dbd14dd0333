package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// MaxOrderBytes bounds an order document.
const MaxOrderBytes = 1 << 20

// DecodeDraftOrderInput reads a draft order (the JSON of
// workflows.DraftOrderInput) strictly: one JSON object, no duplicate keys
// at any depth, no unknown fields, every field of its type. It does not
// validate the values; StartDraftOrder does (DraftOrderInput.Validate).
// Every failure is INVALID_ARGUMENT naming the field.
func DecodeDraftOrderInput(r io.Reader) (workflows.DraftOrderInput, error) {
	var in workflows.DraftOrderInput
	body, err := io.ReadAll(io.LimitReader(r, MaxOrderBytes+1))
	if err != nil {
		return in, errf(toolkit.InvalidArgument, "read order: %v", err)
	}
	if len(body) > MaxOrderBytes {
		return in, errf(toolkit.InvalidArgument, "order is larger than %d bytes", MaxOrderBytes)
	}
	return in, decodeStrict(body, &in)
}

// decodeStrict is toolkit.DecodeToolCall's strictness for any document.
func decodeStrict(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errf(toolkit.InvalidArgument, "order must be one JSON object")
	}
	// encoding/json keeps the last of two equal keys; JCS (RFC 8785)
	// refuses them, at every depth.
	if _, err := jcs.Transform(trimmed); err != nil {
		return errf(toolkit.InvalidArgument, "order is not valid JSON: %s", firstLine(err.Error()))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeDecodeError(err)
	}
	if dec.More() {
		return errf(toolkit.InvalidArgument, "order holds more than one JSON value")
	}
	return nil
}

// describeDecodeError names the field: "field items.quantity must be a
// number, not a string".
func describeDecodeError(err error) *toolkit.Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		want := typeErr.Type.String()
		if typeErr.Type.String() == "time.Duration" {
			want = "a duration in nanoseconds (e.g. 1800000000000 for 30m)"
		}
		return errf(toolkit.InvalidArgument, "field %s must be %s, not a JSON %s", typeErr.Field, want, typeErr.Value).
			WithDetail("field", typeErr.Field)
	}
	msg := strings.TrimPrefix(firstLine(err.Error()), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		name := strings.Trim(f, `"`)
		return errf(toolkit.InvalidArgument, "unknown field %q in the order", name).WithDetail("field", name)
	}
	return errf(toolkit.InvalidArgument, "order: %s", msg)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
