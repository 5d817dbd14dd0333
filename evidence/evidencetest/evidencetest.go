package evidencetest

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/evidence"
)

// KeyID names the key of every cipher this package builds
// (CARTWRIGHT_EVIDENCE_KEY_ID).
const KeyID = "test-1"

// Key returns a fresh random 32-byte evidence key in base64, as
// CARTWRIGHT_EVIDENCE_KEY holds it.
func Key() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return base64.StdEncoding.EncodeToString(key)
}

// Store returns the evidence store on pool and the cipher it encrypts
// with, under a fresh random key named KeyID; logger may be nil (no logs).
func Store(t testing.TB, pool *pgxpool.Pool, logger *zap.Logger) (*evidence.Store, *evidence.AESGCM) {
	t.Helper()
	return StoreWithKey(t, pool, logger, Key())
}

// StoreWithKey is Store with the key given (base64, as Key returns it), for
// tests that hand the same key to another process.
func StoreWithKey(t testing.TB, pool *pgxpool.Pool, logger *zap.Logger, key string) (*evidence.Store, *evidence.AESGCM) {
	t.Helper()
	cipher, err := evidence.NewAESGCMFromBase64(KeyID, key)
	if err != nil {
		t.Fatal(err)
	}
	store, err := evidence.NewStore(pool, cipher, logger)
	if err != nil {
		t.Fatal(err)
	}
	return store, cipher
}
