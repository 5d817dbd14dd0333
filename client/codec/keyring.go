package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// KeyRing holds the payload keys: the current one encrypts, every key
// (current and retired) decrypts. A payload names its key id in its
// metadata, so retired keys keep old histories readable until the last
// history (and archived copy) encrypted under them is gone.
type KeyRing struct {
	current string
	keys    map[string]cipher.AEAD
}

// ParseKeyRing reads CARTWRIGHT_PAYLOAD_KEYS, a comma-separated list of
// `id:base64key` (32-byte AES-256 keys, base64 standard or URL alphabet),
// and CARTWRIGHT_PAYLOAD_KEY_ID, the id of the key that encrypts ("" means
// the first of the list).
func ParseKeyRing(spec, currentID string) (*KeyRing, error) {
	r := &KeyRing{keys: map[string]cipher.AEAD{}}
	var order []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, encoded, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("codec: CARTWRIGHT_PAYLOAD_KEYS entry %q is not id:base64key", redactEntry(item))
		}
		key, err := decodeKey(encoded)
		if err != nil {
			return nil, fmt.Errorf("codec: payload key %q: %w", id, err)
		}
		if err := r.add(id, key); err != nil {
			return nil, err
		}
		order = append(order, id)
	}
	if len(order) == 0 {
		return nil, errors.New("codec: CARTWRIGHT_PAYLOAD_KEYS is not set (id:base64 of 32 random bytes): " +
			"without it workflow payloads would reach Temporal's store in clear")
	}
	if currentID == "" {
		currentID = order[0]
	}
	if _, ok := r.keys[currentID]; !ok {
		return nil, fmt.Errorf("codec: CARTWRIGHT_PAYLOAD_KEY_ID %q is not among CARTWRIGHT_PAYLOAD_KEYS (%s)",
			currentID, strings.Join(r.IDs(), ", "))
	}
	r.current = currentID
	return r, nil
}

// NewKeyRing builds a ring from raw keys by id; current names the key that
// encrypts. For tests and embedding; processes use ParseKeyRing.
func NewKeyRing(current string, keys map[string][]byte) (*KeyRing, error) {
	r := &KeyRing{keys: map[string]cipher.AEAD{}}
	for id, k := range keys {
		if err := r.add(id, k); err != nil {
			return nil, err
		}
	}
	if _, ok := r.keys[current]; !ok {
		return nil, fmt.Errorf("codec: current key id %q is not in the ring", current)
	}
	r.current = current
	return r, nil
}

func (r *KeyRing) add(id string, key []byte) error {
	if id == "" || strings.ContainsAny(id, " ,:") {
		return fmt.Errorf("codec: payload key id %q: must be non-empty without spaces, commas or colons", id)
	}
	if _, dup := r.keys[id]; dup {
		return fmt.Errorf("codec: payload key id %q appears twice", id)
	}
	if len(key) != 32 {
		return fmt.Errorf("codec: payload key %q has %d bytes, AES-256 needs 32", id, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return fmt.Errorf("codec: payload key %q: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return fmt.Errorf("codec: payload key %q: %w", id, err)
	}
	r.keys[id] = aead
	return nil
}

// CurrentID is the id of the key new payloads are encrypted under.
func (r *KeyRing) CurrentID() string { return r.current }

// IDs lists every key id of the ring, sorted.
func (r *KeyRing) IDs() []string {
	ids := make([]string, 0, len(r.keys))
	for id := range r.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func decodeKey(encoded string) ([]byte, error) {
	encoded = strings.TrimSpace(encoded)
	var lastErr error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		key, err := enc.DecodeString(encoded)
		if err == nil {
			return key, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("not base64: %w", lastErr)
}

// redactEntry keeps a malformed entry's shape for the error message but
// never the key material.
func redactEntry(s string) string {
	if len(s) <= 4 {
		return "…"
	}
	return s[:4] + "…"
}
