package evidencetest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync/atomic"
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
	store.SignWith(Signer(t, evidence.WriterWorker))
	return store, cipher
}

// SigningRing returns a fresh one-key Ed25519 ring named id, as
// CARTWRIGHT_WORKER_SIGNING_KEYS holds it (`id:base64seed`).
func SigningRing(id string) string {
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	return id + ":" + base64.StdEncoding.EncodeToString(seed)
}

// Signer returns writer's row signer over a fresh random key (id
// "test-<writer>-<n>", unique within the process).
func Signer(t testing.TB, writer string) *evidence.RowSigner {
	t.Helper()
	s, err := evidence.ParseRowSigner(writer, SigningRing(fmt.Sprintf("test-%s-%d", writer, signers.Add(1))), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var signers atomic.Int64

// The signing rings of this test process's worker and gateway (one key
// each, made once per process) and their public rings: what a test stack's
// configuration and environment hand each process
// (docs/evidence.md#row-signatures).
var (
	WorkerSigningRing  = SigningRing("test-worker")
	GatewaySigningRing = SigningRing("test-gateway")
	WorkerPublicRing   = publicRing(evidence.WriterWorker, WorkerSigningRing)
	GatewayPublicRing  = publicRing(evidence.WriterGateway, GatewaySigningRing)
)

func publicRing(writer, ring string) string {
	s, err := evidence.ParseRowSigner(writer, ring, "")
	if err != nil {
		panic(err) // the ring is made above: a failure is a bug here
	}
	return s.PublicRing()
}
