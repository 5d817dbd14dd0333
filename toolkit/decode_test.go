package toolkit

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDecodeToolCallRejectsWhatEncodingJSONWouldAccept(t *testing.T) {
	cases := map[string]string{
		"duplicate top-level key": `{"tool":"test.echo","tool":"test.other","request":{}}`,
		"duplicate nested key":    `{"tool":"test.echo","request":{"user_id":"a","user_id":"b"}}`,
		"duplicate key in input":  `{"tool":"test.echo","request":{},"input":{"country":"DE","country":"FR"}}`,
		"unknown envelope field":  `{"tool":"test.echo","request":{"request_id":"r","admin":true}}`,
		"unknown top-level field": `{"tool":"test.echo","request":{},"sudo":1}`,
		"two values":              `{"tool":"test.echo","request":{}} {"tool":"x"}`,
		"not an object":           `["test.echo"]`,
		"wrong type":              `{"tool":"test.echo","request":{"dry_run":"yes"}}`,
		"no tool":                 `{"request":{}}`,
		"broken json":             `{"tool":"test.echo",`,
		"oversized":               `{"tool":"test.echo","request":{},"input":{"note":"` + strings.Repeat("a", MaxBodyBytes) + `"}}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeToolCall([]byte(body))
			if CodeOf(err) != InvalidArgument {
				t.Fatalf("got %v, want INVALID_ARGUMENT", err)
			}
		})
	}
}

func TestDecodeToolCallAcceptsAWellFormedCall(t *testing.T) {
	body := `{"tool":"test.echo","request":{"request_id":"r-1","actor":{"type":"agent","id":"a-1"},"user_id":"u_1","dry_run":false},"input":{"country":"DE","quantity":3}}`
	c, err := DecodeToolCall([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tool != "test.echo" || c.Request.Actor.Type != ActorAgent || !bytes.Contains(c.Input, []byte(`"quantity":3`)) {
		t.Fatalf("decoded %+v", c)
	}
}

// FuzzDecodeToolCall feeds arbitrary bodies through decoding and, when they
// decode, through the whole preflight: nothing may panic, every failure is
// INVALID_ARGUMENT, and a body that decodes twice decodes the same.
func FuzzDecodeToolCall(f *testing.F) {
	f.Add([]byte(`{"tool":"test.echo","request":{"request_id":"r","actor":{"type":"user","id":"u"},"user_id":"u"},"input":{"country":"DE","quantity":1}}`))
	f.Add([]byte(`{"tool":"test.echo","request":{},"input":{"country":"DE","country":"FR"}}`))
	f.Add([]byte(`{"tool":"test.echo","request":{"actor":{"type":"robot"}},"input":[1,2,3]}`))
	f.Add([]byte(`{"tool":"","input":null}`))
	f.Add([]byte(`{"tool":"test.echo","request":{"dry_run":true},"input":{"quantity":1e308,"country":"\u0000"}}`))
	calls := 0
	reg := NewRegistry(testSchemas)
	if err := reg.Register(echoSpec(), echoHandler(&calls)); err != nil {
		f.Fatal(err)
	}
	inv := NewInvoker(reg, &recordingSink{}, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := DecodeToolCall(body)
		if err != nil {
			if CodeOf(err) != InvalidArgument {
				t.Fatalf("decode failure with code %s", CodeOf(err))
			}
			return
		}
		again, err := DecodeToolCall(body)
		if err != nil || again.Tool != c.Tool || !bytes.Equal(again.Input, c.Input) {
			t.Fatalf("decoding is not stable: %v", err)
		}
		resp, err := inv.Invoke(context.Background(), c.Tool, c.Request, c.Input)
		if err != nil {
			if !CodeOf(err).Valid() || resp.OK {
				t.Fatalf("invoke failure outside the closed set: %v", err)
			}
			return
		}
		if !resp.OK || resp.SnapshotID() == "" {
			t.Fatalf("success without evidence: %+v", resp)
		}
	})
}
