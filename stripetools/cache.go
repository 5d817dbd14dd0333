package stripetools

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ttlCache is a small map with a time to live and a size bound. It is per
// process: a burst of wizard steps lands on one worker's activities often
// enough, and a stale entry costs at most one TTL of staleness, never a
// wrong write.
type ttlCache[T any] struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	items map[string]ttlItem[T]
}

type ttlItem[T any] struct {
	value T
	at    time.Time
}

func newTTLCache[T any](ttl time.Duration, max int, now func() time.Time) *ttlCache[T] {
	return &ttlCache[T]{ttl: ttl, max: max, now: now, items: map[string]ttlItem[T]{}}
}

// get returns the value stored under key if it is younger than maxAge (and
// than the cache's TTL), with the time it was stored.
func (c *ttlCache[T]) get(key string, maxAge time.Duration) (T, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	it, ok := c.items[key]
	if !ok {
		return zero, time.Time{}, false
	}
	age := c.now().Sub(it.at)
	if age >= c.ttl {
		delete(c.items, key)
		return zero, time.Time{}, false
	}
	if age > maxAge {
		return zero, time.Time{}, false
	}
	return it.value, it.at, true
}

func (c *ttlCache[T]) put(key string, v T, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= c.max {
		now := c.now()
		for k, it := range c.items {
			if now.Sub(it.at) >= c.ttl {
				delete(c.items, k)
			}
		}
		// Still full of live entries: drop arbitrary ones; this is a
		// cost-saving cache, not a source of truth.
		for k := range c.items {
			if len(c.items) < c.max {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[key] = ttlItem[T]{value: v, at: at}
}

var errAborted = errors.New("stripetools: shared upstream call aborted")

// group lets concurrent callers with the same key share one upstream call
// (a burst costs one request even before the cache is filled).
type group[T any] struct {
	mu    sync.Mutex
	calls map[string]*flight[T]
}

type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// do runs fn once per key at a time; callers arriving meanwhile wait for its
// result (shared=true) or for their own context to end.
func (g *group[T]) do(ctx context.Context, key string, fn func() (T, error)) (v T, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*flight[T]{}
	}
	if f, ok := g.calls[key]; ok {
		g.mu.Unlock()
		select {
		case <-f.done:
			return f.val, true, f.err
		case <-ctx.Done():
			var zero T
			return zero, true, ctx.Err()
		}
	}
	// err stays set if fn panics, so waiters never mistake that for success.
	f := &flight[T]{done: make(chan struct{}), err: errAborted}
	g.calls[key] = f
	g.mu.Unlock()

	defer func() {
		g.mu.Lock()
		delete(g.calls, key)
		g.mu.Unlock()
		close(f.done)
	}()
	f.val, f.err = fn()
	return f.val, false, f.err
}
