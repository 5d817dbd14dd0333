// Package quotesealtest is the quote-seal key ring every test process
// shares: a worker binary under test and the test's own in-process tools
// must seal and verify totals with the same key (docs/quote-seals.md#the-seal).
package quotesealtest

import "encoding/base64"

// KeyID names the test quote-seal key.
const KeyID = "test-quote-1"

// key is fixed (32 bytes) so separate test processes agree; it seals
// nothing outside tests.
var key = []byte("cartwright test quote seal key!!")

// Spec is the CARTWRIGHT_QUOTE_SEAL_KEYS value of the test ring.
func Spec() string { return KeyID + ":" + base64.StdEncoding.EncodeToString(key) }
