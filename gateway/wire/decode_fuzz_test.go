package wire

import (
	"bytes"
	"testing"
)

// FuzzDecodeInbound: no body makes the gateway's request decoding panic,
// and every refusal names a reason of the closed list with its code; an
// accepted tools/call always names its tool.
func FuzzDecodeInbound(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"knowledge.cite","arguments":{"claim":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"tool":"knowledge.cite","arguments":{"claim":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"knowledge.cite"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		"{\"a\":\"\xff\"}", `[[[[[[[[[[]]]]]]]]]]`, `{"jsonrpc":"2.0","id":{},"method":"x"}`, `"\"\\"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, bad := Decode(body)
		if bad != nil {
			if _, ok := reasons[bad.Reason]; !ok {
				t.Fatalf("reason %q is not in the closed list", bad.Reason)
			}
			if bad.ID != nil && ValidID(bad.ID) == nil {
				t.Fatalf("an invalid id %s was echoed", bad.ID)
			}
			return
		}
		if in.Method == "tools/call" && in.ID != nil && in.Tool == "" {
			t.Fatalf("a tools/call without a tool passed: %q", body)
		}
		if !in.Legacy && in.Method != "" && (in.ID == nil && requestMethods[in.Method] || string(in.ID) == "null") {
			t.Fatalf("a request without a usable id passed: %q", body)
		}
		if in.Legacy && in.Tool == "" {
			t.Fatalf("a legacy body without a tool passed: %q", body)
		}
		if Nesting(body) > MaxDepth || len(body) > MaxBodyBytes || !bytes.Equal(body, body) {
			t.Fatalf("a body past the limits passed")
		}
	})
}
