package gateway

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
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
