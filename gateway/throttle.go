package gateway

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed authentications a client may make (docs/mcp.md#throttling): a
// burst, then one per refill interval. A client past it is answered 429
// with Retry-After before its token is looked up, so guessing tokens costs
// the guesser time and the database nothing.
const (
	authFailureBurst  = 10
	authFailureRefill = 6 * time.Second
	// maxThrottled bounds the table; past it, clients whose budget has
	// refilled are forgotten first.
	maxThrottled = 10000
)

// authThrottle counts failed authentications per client as token buckets.
type authThrottle struct {
	mu      sync.Mutex
	burst   int
	refill  time.Duration
	clients map[string]*rate.Limiter
}

func newAuthThrottle(burst int, refill time.Duration) *authThrottle {
	return &authThrottle{burst: burst, refill: refill, clients: map[string]*rate.Limiter{}}
}

// wait is how many seconds client must wait before its next attempt is
// heard; 0 when it may try now.
func (t *authThrottle) wait(client string, now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.clients[client]
	if l == nil {
		return 0
	}
	tokens := l.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return max(1, int(math.Ceil((1-tokens)*t.refill.Seconds())))
}

// fail spends one of client's attempts.
func (t *authThrottle) fail(client string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.clients[client]
	if l == nil {
		if len(t.clients) >= maxThrottled {
			t.forgetRefilled(now)
		}
		l = rate.NewLimiter(rate.Every(t.refill), t.burst)
		t.clients[client] = l
	}
	l.AllowN(now, 1)
}

// forgetRefilled drops the clients whose budget is whole again; if none
// is, the table is cleared rather than grown without bound.
func (t *authThrottle) forgetRefilled(now time.Time) {
	for c, l := range t.clients {
		if l.TokensAt(now) >= float64(t.burst) {
			delete(t.clients, c)
		}
	}
	if len(t.clients) >= maxThrottled {
		t.clients = map[string]*rate.Limiter{}
	}
}
