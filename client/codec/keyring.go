package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"

	"github.com/cartwright-dev/cartwright/internal/keyring"
)

// KeyRing holds the payload keys: the current one encrypts, every key
// (current and retired) decrypts. A payload names its key id in its
// metadata, so retired keys keep old histories readable until the last
// history (and archived copy) encrypted under them is gone.
type KeyRing struct {
	ring *keyring.Ring
	keys map[string]cipher.AEAD
}

// payloadKeys is the payload ring: 32-byte AES-256 keys.
var payloadKeys = keyring.Spec{
	Prefix: "codec", Noun: "payload key",
	KeysVar: "CARTWRIGHT_PAYLOAD_KEYS", IDVar: "CARTWRIGHT_PAYLOAD_KEY_ID",
	MinBytes: 32, MaxBytes: 32,
	Unset: "without it workflow payloads would reach Temporal's store in clear",
}

// ParseKeyRing reads CARTWRIGHT_PAYLOAD_KEYS, a comma-separated list of
// `id:base64key` (32-byte AES-256 keys, base64 standard or URL alphabet),
// and CARTWRIGHT_PAYLOAD_KEY_ID, the id of the key that encrypts ("" means
// the first of the list).
func ParseKeyRing(spec, currentID string) (*KeyRing, error) {
	r, err := payloadKeys.Parse(spec, currentID)
	if err != nil {
		return nil, err
	}
	return withCiphers(r)
}

// withCiphers makes each key's AES-GCM once, when the ring is read.
func withCiphers(r *keyring.Ring) (*KeyRing, error) {
	kr := &KeyRing{ring: r, keys: map[string]cipher.AEAD{}}
	for _, id := range r.IDs() {
		key, _ := r.Key(id)
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("codec: payload key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("codec: payload key %q: %w", id, err)
		}
		kr.keys[id] = aead
	}
	return kr, nil
}

// CurrentID is the id of the key new payloads are encrypted under.
func (r *KeyRing) CurrentID() string { return r.ring.CurrentID() }

// IDs lists every key id of the ring, sorted.
func (r *KeyRing) IDs() []string { return r.ring.IDs() }
