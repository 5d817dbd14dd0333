package evidence

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Cipher encrypts raw evidence. The store keeps the key id beside each
// ciphertext so keys can rotate: Seal always uses the current key, Open
// picks the key the row names. A KMS-backed implementation can replace
// AESGCM without touching the store.
type Cipher interface {
	// KeyID names the key Seal uses now.
	KeyID() string
	// Seal encrypts plaintext bound to aad (the snapshot id) and returns
	// the nonce and the ciphertext.
	Seal(plaintext, aad []byte) (nonce, ciphertext []byte, err error)
	// Open decrypts a ciphertext sealed under keyID with aad.
	Open(keyID string, nonce, ciphertext, aad []byte) ([]byte, error)
}

// ErrUnknownKey is returned by Open for a key id the cipher does not hold.
var ErrUnknownKey = errors.New("evidence: unknown encryption key id")

// AESGCM is the local Cipher: AES-256-GCM with random 96-bit nonces. It
// holds the current key and any older keys still needed for reading.
type AESGCM struct {
	mu      sync.RWMutex
	current string
	keys    map[string]cipher.AEAD
}

// NewAESGCM builds a cipher whose current key is key (32 bytes) named keyID.
func NewAESGCM(keyID string, key []byte) (*AESGCM, error) {
	c := &AESGCM{keys: map[string]cipher.AEAD{}}
	if err := c.AddKey(keyID, key); err != nil {
		return nil, err
	}
	c.current = keyID
	return c, nil
}

// NewAESGCMFromBase64 decodes a base64 (standard or URL alphabet, padded or
// not) 32-byte key, as CARTWRIGHT_EVIDENCE_KEY holds it.
func NewAESGCMFromBase64(keyID, encoded string) (*AESGCM, error) {
	encoded = strings.TrimSpace(encoded)
	if encoded == "" {
		return nil, errors.New("evidence: CARTWRIGHT_EVIDENCE_KEY is not set (32 random bytes, base64): raw evidence cannot be encrypted")
	}
	var key []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(encoded); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: CARTWRIGHT_EVIDENCE_KEY is not base64: %w", err)
	}
	return NewAESGCM(keyID, key)
}

// AddKey makes an older key available to Open (key rotation).
func (c *AESGCM) AddKey(keyID string, key []byte) error {
	if keyID == "" {
		return errors.New("evidence: an encryption key needs an id")
	}
	if len(key) != 32 {
		return fmt.Errorf("evidence: key %s has %d bytes, AES-256 needs 32", keyID, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return fmt.Errorf("evidence: key %s: %w", keyID, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return fmt.Errorf("evidence: key %s: %w", keyID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[keyID] = aead
	return nil
}

// KeyID implements Cipher.
func (c *AESGCM) KeyID() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.current
}

// Seal implements Cipher.
func (c *AESGCM) Seal(plaintext, aad []byte) ([]byte, []byte, error) {
	c.mu.RLock()
	aead := c.keys[c.current]
	c.mu.RUnlock()
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("evidence: nonce: %w", err)
	}
	return nonce, aead.Seal(nil, nonce, plaintext, aad), nil
}

// Open implements Cipher.
func (c *AESGCM) Open(keyID string, nonce, ciphertext, aad []byte) ([]byte, error) {
	c.mu.RLock()
	aead, ok := c.keys[keyID]
	c.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, keyID)
	}
	if len(nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("evidence: nonce has %d bytes, want %d", len(nonce), aead.NonceSize())
	}
	out, err := aead.Open(nil, nonce, ciphertext, aad)
	if err != nil {
		return nil, fmt.Errorf("evidence: decrypt with key %s: %w", keyID, err)
	}
	return out, nil
}
