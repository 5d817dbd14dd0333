// Package sealtest is the seal key ring every test process shares: the
// worker under test, the codec server and the audit must verify with the
// same key the test seals with (docs/approvals.md#sealed-decisions).
package sealtest

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/cartwright-dev/cartwright/support"
)

// KeyID names the test seal key.
const KeyID = "test-seal-1"

// key is fixed so separate test processes (a worker binary, the starter)
// agree; it seals nothing outside tests.
var key = []byte("cartwright test seal key, 32+ bytes, never in production")

// Spec is the CARTWRIGHT_SEAL_KEYS value of the test ring.
func Spec() string { return KeyID + ":" + base64.StdEncoding.EncodeToString(key) }

// Ring is the test seal ring.
func Ring() *support.SealRing {
	r, err := support.NewSealRing(KeyID, map[string][]byte{KeyID: key})
	if err != nil {
		panic(err)
	}
	return r
}

// As seals decisions for staffID with the test ring, as the codec server
// does for a signed-in staff member.
func As(staffID string) support.DecisionSealer { return Ring().ForStaff(staffID) }

// Seal is decision d sealed for staffID; it fails the test if d is not
// one the ring seals.
func Seal(t testing.TB, staffID string, d support.Decision) support.SealedDecision {
	t.Helper()
	s, err := As(staffID).SealDecision(context.Background(), d)
	if err != nil {
		t.Fatalf("seal %+v for %s: %v", d, staffID, err)
	}
	return s
}
