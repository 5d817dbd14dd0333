package client

import (
	"bytes"
	"encoding/base64"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// A failed run's failure is stored encrypted: its message field reads
// "Encoded failure". The status says the message the run failed with.
func TestFailedRunSaysItsMessage(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	ring, err := codec.ParseKeyRing("k1:"+key, "k1")
	if err != nil {
		t.Fatal(err)
	}
	dc := codec.New(ring).DataConverter()
	f := codec.FailureConverter(dc).ErrorToFailure(temporal.NewApplicationError("items[0].quantity must be 1-999", string(toolkit.InvalidArgument)))
	if f.GetMessage() == "items[0].quantity must be 1-999" {
		t.Fatal("the failure was not encoded: the test shows nothing")
	}
	if got := failureMessage(dc, f); got != "items[0].quantity must be 1-999" {
		t.Fatalf("status says %q", got)
	}
}
