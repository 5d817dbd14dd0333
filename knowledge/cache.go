package knowledge

import (
	"container/list"
	"sync"
	"time"
)

// lru is a small least-recently-used cache with a time to live. An Index
// belongs to one corpus version, so its cache never mixes versions.
type lru struct {
	mu    sync.Mutex
	cap   int
	ttl   time.Duration
	now   func() time.Time
	order *list.List // front = most recently used
	items map[string]*list.Element
}

type lruEntry struct {
	key     string
	value   CiteResult
	expires time.Time
}

func newLRU(capacity int, ttl time.Duration, now func() time.Time) *lru {
	return &lru{cap: capacity, ttl: ttl, now: now, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (CiteResult, bool) {
	if c.cap <= 0 {
		return CiteResult{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return CiteResult{}, false
	}
	e := el.Value.(*lruEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return CiteResult{}, false
	}
	c.order.MoveToFront(el)
	return e.value.clone(), true
}

func (c *lru) put(key string, v CiteResult) {
	if c.cap <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	exp := c.now().Add(c.ttl)
	if el, ok := c.items[key]; ok {
		e := el.Value.(*lruEntry)
		e.value, e.expires = v.clone(), exp
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key: key, value: v.clone(), expires: exp})
	for c.order.Len() > c.cap {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}
