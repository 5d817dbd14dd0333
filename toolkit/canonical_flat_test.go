package toolkit

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// viaJCS is Canonical as it was before canonicalFlat: encoding/json, then
// jcs.
func viaJCS(t testing.TB, m map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func checkFlat(t testing.TB, m map[string]any) {
	t.Helper()
	got, err := Canonical(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := viaJCS(t, m); string(got) != want {
		t.Fatalf("Canonical(%#v)\n = %s\nwant %s", m, got, want)
	}
}

// TestCanonicalFlatIsJCS: a flat object's canonical bytes are jcs's, for
// the strings that need escaping, the integers at and past 2^53, keys
// that do and do not take the fast path, and values it leaves to jcs.
func TestCanonicalFlatIsJCS(t *testing.T) {
	strs := []string{"", "plain", "quote\"back\\slash", "\b\t\n\f\r", "\x00\x01\x1f\x7f", "<>&", "\u2028\u2029",
		"é€𝄞", "\xff\xfe", "a\u00a0b", "/", "\ufeff"}
	for _, s := range strs {
		checkFlat(t, map[string]any{"s": s, "b": true, "n": 42})
		checkFlat(t, map[string]any{s: 1, "z": s})
	}
	for _, n := range []int64{0, -1, 1 << 53, -(1 << 53), 1<<53 + 1, -(1<<53 + 1), 1 << 62} {
		checkFlat(t, map[string]any{"n": n, "i": int(n), "i32": int32(n)})
	}
	checkFlat(t, map[string]any{})
	checkFlat(t, map[string]any{"nested": map[string]any{"b": 1, "a": "x"}, "f": 1.5, "nil": nil, "list": []any{"x"}})
	checkFlat(t, map[string]any{"Z": 1, "a": 2, "_": 3, "A": 4, "aa": 5, "a a": 6, "~": 7})
	if _, ok := canonicalFlat(map[string]any{"f": 1.5}); ok {
		t.Fatal("a float took the fast path")
	}
	if _, ok := canonicalFlat(map[string]any{"s": "x\xff"}); ok {
		t.Fatal("invalid UTF-8 took the fast path")
	}
	// Random flat objects of awkward strings.
	pieces := []string{"a", "Z", "0", " ", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "é", "\u2028", "𝄞", "<", "&", "\xff", "_", "-"}
	rng := rand.New(rand.NewPCG(7, 2026))
	word := func() string {
		var b strings.Builder
		for n := rng.IntN(6); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 5000 {
		m := map[string]any{}
		for n := rng.IntN(8); n >= 0; n-- {
			switch rng.IntN(4) {
			case 0:
				m[word()] = word()
			case 1:
				m[word()] = rng.Int64N(1<<55) - 1<<54
			case 2:
				m[word()] = rng.IntN(2) == 0
			default:
				m[word()] = int32(rng.Int32())
			}
		}
		checkFlat(t, m)
	}
}

func FuzzCanonicalFlat(f *testing.F) {
	f.Add("k", "v", int64(1), true)
	f.Add("\u2028", "\x00\"\\", int64(1<<53+1), false)
	f.Fuzz(func(t *testing.T, k, s string, n int64, b bool) {
		checkFlat(t, map[string]any{k: s, k + "n": n, "b" + k: b, "s": s})
	})
}
