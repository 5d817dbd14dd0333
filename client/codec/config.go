package codec

import (
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/config"
)

// FromConfig builds the codec of the configured key ring
// (CARTWRIGHT_PAYLOAD_KEYS, CARTWRIGHT_PAYLOAD_KEY_ID). A missing ring is
// an error: a process must not write payloads in clear by accident.
func FromConfig(cfg config.Config) (*Codec, error) {
	ring, err := ParseKeyRing(cfg.PayloadKeys, cfg.PayloadKeyID)
	if err != nil {
		return nil, err
	}
	return New(ring), nil
}

// Apply sets c on SDK client options: the data converter that encrypts and
// decrypts every payload, and the failure converter that moves failure
// messages into an encrypted payload. Workers built on the client inherit
// both, and log a missing payload key through opts.Logger (set it first).
func Apply(opts *sdkclient.Options, c *Codec) {
	dc := c.dataConverter(opts.Logger)
	opts.DataConverter = dc
	opts.FailureConverter = FailureConverter(dc)
}
