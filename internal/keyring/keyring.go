// Package keyring reads the rotating key rings of cartwright: a list of
// `id:base64key,…` in one environment variable and the id of the current
// key in another. The current key makes (encrypts, seals); every key of
// the ring reads (decrypts, verifies), so a key is rotated by adding the
// new one, making it current, and dropping the old one once nothing made
// under it is left (docs/operators.md#key-rings,
// docs/operators.md#rotating-the-payload-key).
//
// A ring is only keys by id: what a key is for (the payload cipher, the
// decision seal, the quote seal) and the code that uses it stay with the
// ring's owner, which names its variables and key size in a Spec.
package keyring

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Spec names one ring for its error messages and says what its keys must
// be. The messages name the variables and the key id, never key material.
type Spec struct {
	// Prefix starts every error: the owning package ("codec").
	Prefix string
	// Noun names one key in errors ("payload key").
	Noun string
	// KeysVar and IDVar are the environment variables of the ring and of
	// the current key id.
	KeysVar, IDVar string
	// MinBytes and MaxBytes bound a key's length (MaxBytes 0: no bound).
	MinBytes, MaxBytes int
	// IDForbidden are the characters an id may not hold besides the
	// ring's own separators (space, comma, colon), e.g. "." when the id
	// is written into a dotted token.
	IDForbidden string
	// Unset completes the error of an empty ring: why the ring is needed.
	Unset string
}

// Ring is an immutable set of keys by id with one current key.
type Ring struct {
	current string
	keys    map[string][]byte
}

// Parse reads text (`id:base64key,…`; base64 standard or URL alphabet,
// padded or not) and currentID ("" means the first key of the list).
func (s Spec) Parse(text, currentID string) (*Ring, error) {
	keys := map[string][]byte{}
	var order []string
	for n, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, encoded, ok := strings.Cut(item, ":")
		if !ok {
			// The entry may be a bare key: it is named by position only.
			return nil, fmt.Errorf("%s: %s entry %d is not id:base64key", s.Prefix, s.KeysVar, n+1)
		}
		key, err := DecodeKey(encoded)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", s.Prefix, s.Noun, id, err)
		}
		if _, dup := keys[id]; dup {
			return nil, fmt.Errorf("%s: %s id %q appears twice in %s", s.Prefix, s.Noun, id, s.KeysVar)
		}
		keys[id] = key
		order = append(order, id)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: %s is not set (id:base64 of %d random bytes): %s", s.Prefix, s.KeysVar, s.MinBytes, s.Unset)
	}
	if currentID == "" {
		currentID = order[0]
	}
	return s.New(currentID, keys)
}

// New builds a ring from raw keys by id; current names the current key.
// The keys are copied.
func (s Spec) New(current string, keys map[string][]byte) (*Ring, error) {
	r := &Ring{current: current, keys: make(map[string][]byte, len(keys))}
	for id, k := range keys {
		if err := s.check(id, k); err != nil {
			return nil, err
		}
		r.keys[id] = append([]byte(nil), k...)
	}
	if _, ok := r.keys[current]; !ok {
		return nil, fmt.Errorf("%s: %s %q is not among the keys of %s (%s)",
			s.Prefix, s.IDVar, current, s.KeysVar, strings.Join(r.IDs(), ", "))
	}
	return r, nil
}

// Empty reports whether text lists no key at all (a ring with a fallback,
// such as a key derived from another, takes it then).
func Empty(text string) bool {
	for _, item := range strings.Split(text, ",") {
		if strings.TrimSpace(item) != "" {
			return false
		}
	}
	return true
}

func (s Spec) check(id string, key []byte) error {
	if id == "" || strings.ContainsAny(id, " ,:"+s.IDForbidden) {
		return fmt.Errorf("%s: %s id %q: must be non-empty and hold none of %q", s.Prefix, s.Noun, id, " ,:"+s.IDForbidden)
	}
	switch {
	case s.MaxBytes == s.MinBytes && len(key) != s.MinBytes:
		return fmt.Errorf("%s: %s %q has %d bytes, needs %d", s.Prefix, s.Noun, id, len(key), s.MinBytes)
	case len(key) < s.MinBytes:
		return fmt.Errorf("%s: %s %q has %d bytes, needs at least %d", s.Prefix, s.Noun, id, len(key), s.MinBytes)
	case s.MaxBytes > 0 && len(key) > s.MaxBytes:
		return fmt.Errorf("%s: %s %q has %d bytes, needs at most %d", s.Prefix, s.Noun, id, len(key), s.MaxBytes)
	}
	return nil
}

// CurrentID is the id of the current key.
func (r *Ring) CurrentID() string { return r.current }

// Current is the current key and its id. The key must not be modified.
func (r *Ring) Current() (string, []byte) { return r.current, r.keys[r.current] }

// Key looks a key up by id. The key must not be modified.
func (r *Ring) Key(id string) ([]byte, bool) {
	k, ok := r.keys[id]
	return k, ok
}

// IDs lists every key id of the ring, sorted.
func (r *Ring) IDs() []string { return slices.Sorted(maps.Keys(r.keys)) }

// String describes the ring for logs: ids only, never key material.
func (r *Ring) String() string {
	return fmt.Sprintf("current=%s keys=%s", r.current, strings.Join(r.IDs(), ","))
}

// errNotBase64 is a key that no base64 alphabet reads. The decoder's own
// error is left out: it quotes the offending byte's position in the key.
var errNotBase64 = errors.New("not base64")

// DecodeKey reads one key in base64, standard or URL alphabet, padded or
// not.
func DecodeKey(encoded string) ([]byte, error) {
	encoded = strings.TrimSpace(encoded)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(encoded); err == nil {
			return key, nil
		}
	}
	return nil, errNotBase64
}
