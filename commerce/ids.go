package commerce

import (
	"fmt"
	"time"

	"github.com/cartwright-dev/cartwright/internal/ulid"
)

// newID returns prefix + a 26-character ULID-like id: 48 bits of
// milliseconds then 80 random bits, so ids sort by creation time and are
// unguessable (a draft order id is handed to the user).
func newID(prefix string, now time.Time) (string, error) {
	id, err := ulid.New(now)
	if err != nil {
		return "", fmt.Errorf("%s id: %w", prefix, err)
	}
	return prefix + id, nil
}
