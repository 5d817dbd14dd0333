package gateway

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// budgets holds each actor's call budget (docs/mcp.md#callers): calls per
// minute and payload bytes per minute, as token buckets a minute deep. It
// lives in the gateway process: each gateway replica enforces its share.
type budgets struct {
	mu     sync.Mutex
	actors map[string]*budget
}

type budget struct {
	calls, bytes *rate.Limiter
	cpm, bpm     int
}

func newBudgets() *budgets { return &budgets{actors: map[string]*budget{}} }

// errOverBudget is a single call larger than the whole byte budget: no
// wait makes it fit, so it is refused at once as not retryable.
func errOverBudget(a Actor, n int) *toolkit.Error {
	return toolkit.Errorf(toolkit.InvalidArgument, "the call's %d bytes of arguments exceed %s's whole budget of %d bytes a minute",
		n, a.ID, a.BytesPerMinute).
		WithDetail("payload_bytes", n).WithDetail("bytes_per_minute", a.BytesPerMinute).
		WithRecovery("send smaller arguments (split the call); waiting does not help")
}

// spend takes one call and n payload bytes from a's budget: nil when the
// call may run, RATE_LIMITED with retry_after_seconds when the budget is
// spent for now, INVALID_ARGUMENT (not retryable) when the call alone is
// larger than the budget.
func (b *budgets) spend(a Actor, n int, now time.Time) *toolkit.Error {
	if n > a.BytesPerMinute {
		return errOverBudget(a, n)
	}
	if ok, after := b.take(a, n, now); !ok {
		return toolkit.Errorf(toolkit.RateLimited, "call budget of %s spent (%d calls, %d bytes a minute)",
			a.ID, a.CallsPerMinute, a.BytesPerMinute).
			WithRetryAfter(time.Duration(after) * time.Second).
			WithRecovery("wait retry_after_seconds, then call again with the same idempotency_key")
	}
	return nil
}

// take spends one call and n payload bytes of a's budget, or spends
// nothing and says how long to wait.
func (b *budgets) take(a Actor, n int, now time.Time) (ok bool, retryAfter int) {
	b.mu.Lock()
	bu := b.actors[a.TokenID]
	if bu == nil || bu.cpm != a.CallsPerMinute || bu.bpm != a.BytesPerMinute {
		bu = &budget{
			calls: rate.NewLimiter(rate.Limit(float64(a.CallsPerMinute)/60), a.CallsPerMinute),
			bytes: rate.NewLimiter(rate.Limit(float64(a.BytesPerMinute)/60), a.BytesPerMinute),
			cpm:   a.CallsPerMinute, bpm: a.BytesPerMinute,
		}
		b.actors[a.TokenID] = bu
	}
	b.mu.Unlock()
	if n > a.BytesPerMinute {
		return false, 60
	}
	c := bu.calls.ReserveN(now, 1)
	by := bu.bytes.ReserveN(now, n)
	wait := max(c.DelayFrom(now), by.DelayFrom(now))
	if wait <= 0 {
		return true, 0
	}
	c.CancelAt(now)
	by.CancelAt(now)
	return false, int(math.Ceil(wait.Seconds()))
}
