package gateway

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestAuthThrottle: a burst of failures, then one per refill interval;
// clients are counted apart; the table stays bounded.
func TestAuthThrottle(t *testing.T) {
	th := newAuthThrottle(3, 10*time.Second)
	now := time.Unix(1_000_000, 0)
	for i := 0; i < 3; i++ {
		if w := th.wait("a", now); w != 0 {
			t.Fatalf("failure %d: wait %d", i, w)
		}
		th.fail("a", now)
	}
	if w := th.wait("a", now); w != 10 {
		t.Fatalf("after the burst: wait %d, want 10", w)
	}
	if w := th.wait("b", now); w != 0 {
		t.Fatalf("another client waits %d", w)
	}
	if w := th.wait("a", now.Add(10*time.Second)); w != 0 {
		t.Fatalf("after one refill: wait %d", w)
	}
	for i := 0; i < maxThrottled+5; i++ {
		th.fail(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String(), now.Add(time.Hour))
	}
	if len(th.clients) > maxThrottled {
		t.Fatalf("%d clients held", len(th.clients))
	}
}

// TestClientOfBehindTrustedProxies: X-Forwarded-For counts only when the
// peer is a trusted proxy, and then its nearest untrusted hop is the
// client; a client cannot name itself someone else.
func TestClientOfBehindTrustedProxies(t *testing.T) {
	g := &Gateway{opts: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.7:5000", "", "203.0.113.7"},
		{"203.0.113.7:5000", "198.51.100.1", "203.0.113.7"}, // not a proxy: its header is ignored
		{"10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:5000", "1.1.1.1, 198.51.100.1, 10.9.9.9", "198.51.100.1"}, // the forged left hop is not reached
		{"10.1.2.3:5000", "", "10.1.2.3"},
		{"10.1.2.3:5000", "garbage", "10.1.2.3"},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := g.clientOf(r); got != c.want {
			t.Fatalf("peer %s XFF %q: client %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}
