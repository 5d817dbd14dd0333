package gateway_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/gateway"
)

// TestAttackHeaderCapIsExact (docs/mcp.md#transport-limits): a request
// whose head (request line and header lines) is exactly MaxHeaderBytes
// long reaches the gateway (401: no token), one byte more is 431 — not
// the 4 KiB more Go's own cap lets through.
func TestAttackHeaderCapIsExact(t *testing.T) {
	s := newStack(t)
	url := s.gatewayWith(t, nil, nil)
	head := func(size int) string {
		base := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 0\r\nX-Pad: \r\n\r\n"
		return strings.Replace(base, "X-Pad: ", "X-Pad: "+strings.Repeat("a", size-len(base)), 1)
	}
	for _, c := range []struct {
		size int
		want string
	}{
		{gateway.MaxHeaderBytes, " 401 "},
		{gateway.MaxHeaderBytes + 1, " 431 "},
		{gateway.MaxHeaderBytes + 3000, " 431 "},
	} {
		h := head(c.size)
		if len(h) != c.size {
			t.Fatalf("built a %d-byte head, want %d", len(h), c.size)
		}
		conn := rawConn(t, url)
		_, _ = io.WriteString(conn, h)
		if got := answeredWithin(t, conn, 5*time.Second); !strings.Contains(got, c.want) {
			t.Fatalf("a %d-byte head (cap %d): %q, want%s", c.size, gateway.MaxHeaderBytes, got, c.want)
		}
	}
}
