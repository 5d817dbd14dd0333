package testenv

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// StripeSwitch stands in front of the test stack's stripe-mock: it
// forwards every request, or answers 503 (Stripe's api_error) while Down —
// an outage that ends when the test says so. It counts the requests it
// refused and forwarded per path.
type StripeSwitch struct {
	// URL is the switch's address: the Stripe API base to configure.
	URL   string
	down  atomic.Bool
	proxy *httputil.ReverseProxy

	mu     sync.Mutex
	served map[string]int
	failed map[string]int
}

// NewStripeSwitch starts the switch in front of StripeAPIBase(), up; it
// stops at cleanup.
func NewStripeSwitch(t testing.TB) *StripeSwitch {
	t.Helper()
	upstream, err := url.Parse(StripeAPIBase())
	if err != nil {
		t.Fatal(err)
	}
	s := &StripeSwitch{proxy: httputil.NewSingleHostReverseProxy(upstream), served: map[string]int{}, failed: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Down starts (true) or ends (false) the outage.
func (s *StripeSwitch) Down(down bool) { s.down.Store(down) }

// Counts are the requests whose path contains part: refused during the
// outage, and forwarded.
func (s *StripeSwitch) Counts(part string) (refused, forwarded int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, n := range s.failed {
		if strings.Contains(p, part) {
			refused += n
		}
	}
	for p, n := range s.served {
		if strings.Contains(p, part) {
			forwarded += n
		}
	}
	return refused, forwarded
}

func (s *StripeSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	down := s.down.Load()
	s.mu.Lock()
	if down {
		s.failed[r.URL.Path]++
	} else {
		s.served[r.URL.Path]++
	}
	s.mu.Unlock()
	if down {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error": {"type": "api_error", "message": "Stripe is down (test)"}}`))
		return
	}
	s.proxy.ServeHTTP(w, r)
}
