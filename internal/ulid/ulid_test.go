package ulid

import (
	"strings"
	"testing"
	"time"
)

func TestEncode128(t *testing.T) {
	var zero, ones [16]byte
	for i := range ones {
		ones[i] = 0xff
	}
	if got := encode128(zero); got != strings.Repeat("0", 26) {
		t.Fatalf("zero = %s", got)
	}
	if got := encode128(ones); got != "7"+strings.Repeat("Z", 25) {
		t.Fatalf("ones = %s", got)
	}
}

func TestNewSortsByTime(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a, err := New(at)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(at.Add(time.Millisecond))
	if len(a) != 26 || len(b) != 26 || a[:10] >= b[:10] {
		t.Fatalf("%s then %s", a, b)
	}
}
