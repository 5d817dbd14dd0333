package toolkit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// checkCanonicalTree fails when the canonical form written from the
// decoded value differs from jcs.Transform of the bytes, in bytes or in
// whether it fails; and likewise for the value's own hash (json.Marshal
// then jcs).
func checkCanonicalTree(t *testing.T, raw []byte) {
	t.Helper()
	tree, err := decodeJSON(raw)
	if err != nil || !json.Valid(raw) {
		return // not one JSON value: the invoker's come from json.Marshal
	}
	want, wantErr := jcs.Transform(raw)
	got, gotErr := canonicalDecoded(raw, tree)
	if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%q:\n tree %q (%v)\n jcs  %q (%v)", raw, got, gotErr, want, wantErr)
	}
	// What the encoder itself writes, fallback aside.
	if n, ok := countMembers(tree); ok && n == colonsOutsideStrings(raw) {
		if own, ok := appendCanonical(nil, tree); ok && (wantErr != nil || !bytes.Equal(own, want)) {
			t.Fatalf("%q: encoder wrote %q, jcs %q (%v)", raw, own, want, wantErr)
		}
	}
	gotH, gotHErr := canonicalHashValue(tree)
	wantH, wantHErr := CanonicalHash(tree)
	if gotH != wantH || (gotHErr == nil) != (wantHErr == nil) {
		t.Fatalf("%q: value hash %q (%v), CanonicalHash %q (%v)", raw, gotH, gotHErr, wantH, wantHErr)
	}
}

// canonicalSeeds are the cases RFC 8785 and jcs single out: numbers at
// the edges of a double and of ES6's formats, keys that sort differently
// in UTF-16 and UTF-8, every escape, and what jcs refuses.
func canonicalSeeds() []string {
	return []string{
		`{}`, `[]`, `null`, `true`, `"x"`, `0`, `-0`, `-0.0`, `1e21`, `1e20`, `123456789012345678901`, `1E+2`,
		`5e-324`, `4.9e-324`, `1e-7`, `0.000001`, `1.7976931348623157e308`, `1e309`, `-1e400`, `9007199254740993`,
		`0.1`, `100`, `1.50`, `2e-1`, `333333333.33333329`, `1E400`, `-5e-325`,
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `[{"x":1},{"x":2}]`,
		`{"\ud83d\ude00":1,"\ufb01":2,"\ue000":3,"a":4,"Ω":5,"":6}`, `{"€":1,"\u20ac":2}`,
		`"\u0000\u001f\u007f\b\f\n\r\t\"\\\/"`, `"<>&\u2028\u2029"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`,
		"\"\xff\"", "{\"\xc3\":1}", "\"\xed\xa0\x80\"", `"\ufffd"`, `{"a":"b:c","d\"":"e\\"}`,
		`{"k":[1,"2",[3,{"4":5}],null,false]}`, ` {"a" : 1 } `, `{"a":1} x`, `{"a":1}{"b":2}`,
		`{"n":1e400,"m":1}`, `{"s":"\\u00e9","t":"\u00e9"}`,
	}
}

func TestCanonicalTreeMatchesJCS(t *testing.T) {
	for _, s := range canonicalSeeds() {
		checkCanonicalTree(t, []byte(s))
	}
	rng := rand.New(rand.NewPCG(8785, 12))
	for range 20000 {
		checkCanonicalTree(t, []byte(randomJSON(rng, 3)))
	}
}

func FuzzCanonicalTree(f *testing.F) {
	for _, s := range canonicalSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkCanonicalTree(t, []byte(s)) })
}

// The keys of an object are ordered by UTF-16 code units: U+1F600 (a
// surrogate pair, 0xD83D…) before U+E000 and U+FB01, the reverse of their
// UTF-8 order.
func TestCanonicalTreeSortsByUTF16(t *testing.T) {
	got, ok := appendCanonical(nil, map[string]any{"\ufb01": json.Number("1"), "\U0001F600": json.Number("2"), "\ue000": json.Number("3"), "z": json.Number("4")})
	want := "{\"z\":4,\"\U0001F600\":2,\"\ue000\":3,\"\ufb01\":1}"
	if !ok || string(got) != want {
		t.Fatalf("got %q (%v), want %q", got, ok, want)
	}
}

// randomJSON writes a JSON text, or now and then a near miss, from the
// pieces jcs treats with care.
func randomJSON(rng *rand.Rand, depth int) string {
	numbers := []string{"0", "-0", "1", "-1", "1.0", "1.5", "0.1", "1e21", "1e20", "1E-7", "1e-6", "5e-324",
		"1.7976931348623157e308", "1e309", "9007199254740993", "123456789012345678901234567890", "2.5e+3",
		"-0.000001", "100", "3.14159265358979323846", "1e-400", "01", "1.", "+1"}
	texts := []string{"", "a", "Z", "é", "€", "\U0001F600", "\ue000", "\ufb01", "\u2028", "<&>", `\"`, `\\`, `\/`,
		`\b`, `\f`, `\n`, `\r`, `\t`, `\u0000`, `\u001f`, `\u007f`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`,
		`\uffff`, `\ufffd`, "\x7f", "\xff", ":", ",", "{", "a:b", "sha256:0f", "2026-11-22T10:15:00Z"}
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for n := rng.IntN(4); n > 0; n-- {
			b.WriteString(texts[rng.IntN(len(texts))])
		}
		b.WriteByte('"')
		return b.String()
	}
	k := rng.IntN(10)
	if depth == 0 && k >= 7 {
		k = rng.IntN(7)
	}
	switch k {
	case 0, 1:
		return numbers[rng.IntN(len(numbers))]
	case 2, 3:
		return str()
	case 4:
		return []string{"true", "false", "null"}[rng.IntN(3)]
	case 5, 6:
		if rng.IntN(4) == 0 {
			return " " + str() + "\n"
		}
		return str()
	case 7:
		parts := make([]string, rng.IntN(4))
		for i := range parts {
			parts[i] = randomJSON(rng, depth-1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		parts := make([]string, rng.IntN(5))
		for i := range parts {
			parts[i] = str() + ":" + randomJSON(rng, depth-1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// The invoker's hashes through the tree are the hashes of the bytes.
func TestInvokerHashesAreCanonicalHashes(t *testing.T) {
	calls := 0
	inv, sink := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	in := map[string]any{"country": "DE", "quantity": 2, "note": "\U0001F600 \ufb01 1e21"}
	resp, err := inv.Invoke(t.Context(), "test.echo", validRequest(), in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(in)
	if want, _ := CanonicalHash(json.RawMessage(raw)); resp.Meta.InputFingerprint != want {
		t.Errorf("input fingerprint %s, want %s", resp.Meta.InputFingerprint, want)
	}
	if want, _ := CanonicalHash(resp.Data); resp.Meta.OutputFingerprint != want {
		t.Errorf("output fingerprint %s, want %s", resp.Meta.OutputFingerprint, want)
	}
	if h, hit := outputHashes.get(resp.Data); !hit || h != resp.Meta.OutputFingerprint {
		t.Errorf("the output's hash is not remembered for the evidence store: %q %v", h, hit)
	}
	if snap := sink.snaps[sink.count()-1]; snap.OutputHash != resp.Meta.OutputFingerprint {
		t.Errorf("snapshot hash %s, envelope %s", snap.OutputHash, resp.Meta.OutputFingerprint)
	}
}
