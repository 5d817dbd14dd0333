package commerce

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"
)

// crockford is the Crockford base-32 alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newID returns prefix + a 26-character ULID-like id: 48 bits of
// milliseconds then 80 random bits, so ids sort by creation time and are
// unguessable (a draft order id is handed to the user).
func newID(prefix string, now time.Time) (string, error) {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("%s id: %w", prefix, err)
	}
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return prefix + string(out), nil
}
