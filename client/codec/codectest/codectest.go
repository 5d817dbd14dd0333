package codectest

import (
	"crypto/sha256"
	"encoding/base64"

	"go.temporal.io/sdk/converter"

	"github.com/cartwright-dev/cartwright/client/codec"
)

// KeyID names the test stacks' payload key.
const KeyID = "test-payload-1"

// Key derives a test key from a label: fixed, so every process of a test
// run agrees on it without sharing a file, and never a production key.
func Key(label string) []byte {
	k := sha256.Sum256([]byte("cartwright test payload key: " + label))
	return k[:]
}

// Spec is the CARTWRIGHT_PAYLOAD_KEYS value of the test key ring.
func Spec() string { return KeyID + ":" + base64.StdEncoding.EncodeToString(Key(KeyID)) }

// Codec is the codec of the test key ring.
func Codec() *codec.Codec {
	ring, err := codec.ParseKeyRing(Spec(), KeyID)
	if err != nil {
		panic(err) // a constant ring: a failure is a bug here
	}
	return codec.New(ring)
}

// DataConverter is the test stacks' data converter (the audit's replayer
// needs the workers' one).
func DataConverter() converter.DataConverter { return Codec().DataConverter() }
