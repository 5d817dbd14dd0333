package codecserver

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// Failed sign-ins a client may make per minute before every sign-in from
// it is answered 429 (docs/support.md#codec-server-sign-in): enough for a
// few typos, far too few to guess a token. A failure is a staff token that
// was presented and refused, on the login page or as a bearer token; a
// request with no credential at all (the Web UI before sign-in) is not one.
const (
	FailedSignInsPerMinute = 5
	// maxThrottledClients bounds the table: beyond it, clients whose
	// allowance is full again are forgotten first.
	maxThrottledClients = 10000
)

// throttle counts failed sign-ins per client with a token bucket: each
// failure takes a token, one comes back every 60/FailedSignInsPerMinute
// seconds.
type throttle struct {
	mu      sync.Mutex
	clients map[string]*rate.Limiter
	now     func() time.Time
}

func newThrottle(now func() time.Time) *throttle {
	if now == nil {
		now = time.Now
	}
	return &throttle{clients: map[string]*rate.Limiter{}, now: now}
}

// wait is how long client must wait before its next sign-in is even
// checked; zero when it may try now.
func (t *throttle) wait(client string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.clients[client]
	if !ok {
		return 0
	}
	tokens := l.TokensAt(t.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.Limit()) * float64(time.Second))
}

// fail records a refused credential from client.
func (t *throttle) fail(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	l, ok := t.clients[client]
	if !ok {
		if len(t.clients) >= maxThrottledClients {
			t.forgetRecovered(now)
		}
		l = rate.NewLimiter(rate.Every(time.Minute/FailedSignInsPerMinute), FailedSignInsPerMinute)
		t.clients[client] = l
	}
	l.AllowN(now, 1)
}

func (t *throttle) forgetRecovered(now time.Time) {
	for c, l := range t.clients {
		if l.TokensAt(now) >= float64(l.Burst()) {
			delete(t.clients, c)
		}
	}
}

// refuseThrottled answers 429 with Retry-After (whole seconds, rounded up)
// when client is throttled, and says whether it did.
func (s *Server) refuseThrottled(w http.ResponseWriter, client string) bool {
	d := s.throttle.wait(client)
	if d <= 0 {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
	http.Error(w, "too many failed sign-ins from this client; retry later", http.StatusTooManyRequests)
	s.logger.Warn("codec sign-in throttled", zap.String("client", client), zap.Duration("retry_after", d))
	return true
}

// clientOf is who a sign-in is counted against: the peer address the
// connection came from. Forwarded headers are not trusted (any caller can
// write them); behind a proxy, every client shares the proxy's allowance,
// which errs on the side of refusing.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
