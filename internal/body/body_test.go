package body

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

func TestRead(t *testing.T) {
	b, err := Read(strings.NewReader(`{"a":1}`))
	if err != nil || string(b) != `{"a":1}` {
		t.Fatalf("Read = %q, %v", b, err)
	}
	if _, err := Read(bytes.NewReader(make([]byte, toolkit.MaxBodyBytes))); err != nil {
		t.Fatalf("a body of exactly the limit: %v", err)
	}
	_, err = Read(bytes.NewReader(make([]byte, toolkit.MaxBodyBytes+1)))
	if toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("a body over the limit: %v", err)
	}
}
