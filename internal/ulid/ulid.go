package ulid

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// crockford is the Crockford base-32 alphabet ULIDs use (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns the 26-character id of a thing created at now.
func New(now time.Time) (string, error) {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := rand.Read(b[6:]); err != nil {
		return "", err
	}
	return encode128(b), nil
}

// encode128 writes 128 bits as 26 base-32 digits (the first carries 3 bits).
func encode128(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}
