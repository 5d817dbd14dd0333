package toolkit

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// viaJCS is Canonical as it was before canonicalFlat: encoding/json, then
// jcs.
func viaJCS(t testing.TB, m any) string {
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

func checkFlat(t testing.TB, m any) {
	t.Helper()
	got, err := Canonical(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := viaJCS(t, m); string(got) != want {
		t.Fatalf("Canonical(%#v)\n = %s\nwant %s", m, got, want)
	}
}

// TestCanonicalTreeIsJCS: canonicalTree's bytes are jcs's, for the
// strings that need escaping, integers at and past 2^53, the numbers a
// decoded tree holds, nested objects and arrays, keys that do and do not
// take the fast path, and values it leaves to jcs.
func TestCanonicalTreeIsJCS(t *testing.T) {
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
	for _, n := range []string{"0", "-0", "0.95", "1.0", "-1.50", "1e21", "1e20", "1E-7", "0.000001", "123456789012345678901234567890",
		"0.30000000000000004", "9007199254740993", "-12.5e3", "5e-324"} {
		checkFlat(t, map[string]any{"n": json.Number(n), "l": []any{json.Number(n), nil, true, "x"}})
		checkFlat(t, []any{json.Number(n)})
	}
	checkFlat(t, map[string]any{"\U0001F600": 1, "\uffff": 2, "\ue000": 3, "a": 4})
	checkFlat(t, map[string]any{"outer": []any{map[string]any{"z": json.Number("1"), "a": []any{}}, map[string]any{}}})
	if _, ok := canonicalTree(map[string]any{"s": "x\xff"}); ok {
		t.Fatal("invalid UTF-8 took the fast path")
	}
	if _, ok := canonicalTree(map[string]any{"\U0001F600": 1}); ok {
		t.Fatal("a key past U+FFFF took the fast path")
	}
	for _, n := range []string{"0x1p4", "Inf", "+1", "1_0"} {
		if _, ok := canonicalTree(map[string]any{"n": json.Number(n)}); ok {
			t.Fatalf("%s, not a JSON number, took the fast path", n)
		}
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
			switch rng.IntN(6) {
			case 0:
				m[word()] = word()
			case 4:
				m[word()] = []any{word(), json.Number(strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)), nil}
			case 5:
				m[word()] = map[string]any{word(): json.Number(strconv.Itoa(rng.IntN(1000))), word(): word()}
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

func FuzzCanonicalTree(f *testing.F) {
	f.Add("k", "v", int64(1), true, "1")
	f.Add("\u2028", "\x00\"\\", int64(1<<53+1), false, "-0.0")
	f.Add("k", "v", int64(1), true, "0.5")
	f.Fuzz(func(t *testing.T, k, s string, n int64, b bool, num string) {
		checkFlat(t, map[string]any{k: s, k + "n": n, "b" + k: b, "s": s})
		if json.Valid([]byte(num)) {
			var v any
			d := json.NewDecoder(strings.NewReader(num))
			d.UseNumber()
			if d.Decode(&v) == nil {
				if _, err := jcs.Transform([]byte(num)); err == nil {
					checkFlat(t, map[string]any{k: v, "a": []any{v}})
				}
			}
		}
	})
}

// checkRaw: Canonical of JSON text is jcs's answer, bytes or refusal.
func checkRaw(t testing.TB, raw []byte) {
	t.Helper()
	got, err := Canonical(json.RawMessage(raw))
	want, werr := jcs.Transform(raw)
	if (err == nil) != (werr == nil) || string(got) != string(want) {
		t.Fatalf("Canonical(%q) = %q, %v; jcs %q, %v", raw, got, err, want, werr)
	}
}

// TestCanonicalRawIsJCS: JSON text takes the direct path only where
// encoding/json and jcs cannot disagree; repeated keys, invalid UTF-8, lone
// surrogates and trailing data stay jcs's, refusals included.
func TestCanonicalRawIsJCS(t *testing.T) {
	for _, raw := range []string{
		`{"b":1,"a":[true,false,null,"x"]}`, ` 42 `, `"s"`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `{"a":"\ud800"}`,
		`{"a":"\ud83d\ude00"}`, "{\"a\":\"\xff\"}", `{"a":1} x`, `{"a":1} {"b":2}`, `{"a":1}` + "\n\t ", `[1e400]`,
		`{"a":"x:y","b":"\"c\":"}`, `{"\\":"\\\\ud800"}`, `[0.1,-0,1E2,1e21,1e-7]`, ``, `{`, `{"a":01}`, `[1,]`,
		`{"a":"\u0000\u001f\/"}`, `{"é":1,"e":2,"\ufb01":3}`, "\ufeff{}", `{"a":"\u2028"}`,
	} {
		checkRaw(t, []byte(raw))
	}
}

func FuzzCanonicalRaw(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":1} x`, `[0.5,-0,1e21]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkRaw(t, raw) })
}

// TestInputFingerprintIsCanonicalHash: the input's fingerprint from its
// decoded tree is CanonicalHash of its bytes, refusal included (a repeated
// key, trailing data).
func TestInputFingerprintIsCanonicalHash(t *testing.T) {
	for _, raw := range []string{`{"b":1,"a":["x",null,2.50]}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":1} 2`, `{"é":"\u2028"}`} {
		tree, err := decodeJSON([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := inputFingerprint(json.RawMessage(raw), tree)
		want, werr := CanonicalHash(json.RawMessage(raw))
		if got != want || (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: fingerprint %q %v, CanonicalHash %q %v", raw, got, gerr, want, werr)
		}
	}
}
