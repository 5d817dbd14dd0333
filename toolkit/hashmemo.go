package toolkit

import (
	"encoding/json"
	"sync"
)

// OutputHash is CanonicalHash of a snapshot's output. The invoker hashes
// each output it answers with, and the evidence store then checks the
// snapshot's hash against the same bytes (evidence/store.go, build): a
// small memo of the latest outputs, keyed by their exact bytes, makes that
// second canonicalisation a lookup. The hash is a function of
// the bytes, so a hit is what CanonicalHash would return.
func OutputHash(raw json.RawMessage) (string, error) {
	if h, ok := outputHashes.get(raw); ok {
		return h, nil
	}
	h, err := CanonicalHash(raw)
	if err != nil {
		return "", err
	}
	outputHashes.put(raw, h)
	return h, nil
}

// hashMemoSize bounds the memo: a hash is looked up right after it was
// put, by the same call, and a worker runs far fewer calls at once.
const hashMemoSize = 64

var outputHashes = &hashMemo{byBytes: make(map[string]string, hashMemoSize)}

// hashMemo maps outputs to their hashes, forgetting the oldest first.
type hashMemo struct {
	mu      sync.Mutex
	byBytes map[string]string
	order   [hashMemoSize]string
	next    int
}

func (m *hashMemo) get(raw []byte) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.byBytes[string(raw)]
	return h, ok
}

func (m *hashMemo) put(raw []byte, h string) {
	key := string(raw) // a copy: the caller's buffer may change
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byBytes[key]; ok {
		return
	}
	delete(m.byBytes, m.order[m.next])
	m.order[m.next] = key
	m.next = (m.next + 1) % hashMemoSize
	m.byBytes[key] = h
}
