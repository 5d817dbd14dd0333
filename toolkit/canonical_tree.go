package toolkit

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// A decoded JSON value (maps, slices, strings, numbers, booleans, null:
// what the invoker's schema check and sanitising walk) or a flat object of
// strings, integers and booleans (an evidence row's content) is canonical
// once its keys are sorted, its strings escaped as RFC 8785 §3.2.2.2 says
// and its numbers written as jcs.NumberToJSON writes them. Encoding it to
// JSON and parsing that back through jcs cost about 40 µs for a row's
// content and as much for a tool's answer (docs/performance.md#the-tool-pipeline).
// canonicalTree writes those bytes directly and answers false for anything
// else (a struct, a key jcs would sort differently, invalid UTF-8), which
// Canonical then hands to jcs as before. TestCanonicalTreeIsJCS and
// FuzzCanonicalTree compare the two.

// maxExactInt is 2^53: up to it an integer's decimal digits are its
// canonical form; past it, the double jcs reads it as.
const maxExactInt = 1 << 53

// canonicalRaw is jcs.Transform(raw) through encoding/json and
// canonicalTree, where the two cannot differ: raw is valid UTF-8 with no
// \uD800–\uDFFF escape (the decoder turns invalid text and lone
// surrogates into U+FFFD, jcs copies or refuses them), one JSON value and
// white space after it (the decoder stops at the first value), and no
// object repeats a key (the decoder keeps the last, jcs refuses): every
// member of raw is one entry of the tree. Anything else is jcs's.
func canonicalRaw(raw []byte) ([]byte, bool) {
	if !plainText(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if len(bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n")) != 0 || members(raw) != entries(v) {
		return nil, false
	}
	return canonicalTree(v)
}

// canonicalDecoded is canonicalRaw(raw) for raw already decoded into tree
// by decodeJSON (the invoker's input): json.Valid stands for the decoder's
// "one value and white space after it".
func canonicalDecoded(raw []byte, tree any) ([]byte, bool) {
	if !plainText(raw) || !json.Valid(raw) || members(raw) != entries(tree) {
		return nil, false
	}
	return canonicalTree(tree)
}

// plainText: raw is valid UTF-8 without a surrogate escape.
func plainText(raw []byte) bool {
	return utf8.Valid(raw) && !(bytes.Contains(raw, []byte(`\u`)) && hasSurrogateEscape(raw))
}

// hasSurrogateEscape reports whether raw may hold a \uD800–\uDFFF escape
// (an escaped backslash before "u" counts too: the slow path decides).
func hasSurrogateEscape(raw []byte) bool {
	for i := 0; i+3 < len(raw); i++ {
		if raw[i] == '\\' && raw[i+1] == 'u' && raw[i+2]|0x20 == 'd' && strings.IndexByte("89abcdefABCDEF", raw[i+3]) >= 0 {
			return true
		}
	}
	return false
}

// members counts the object members of JSON text: the ':' outside strings.
func members(raw []byte) int {
	n, inString := 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == ':':
			n++
		}
	}
	return n
}

// entries counts the object entries of a decoded tree.
func entries(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n += len(x)
		for _, e := range x {
			n += entries(e)
		}
	case []any:
		for _, e := range x {
			n += entries(e)
		}
	}
	return n
}

// canonicalTree is Canonical(v) for the values described above; ok is
// false for any other.
func canonicalTree(v any) (out []byte, ok bool) {
	return appendCanonical(make([]byte, 0, 512), v)
}

func appendCanonical(out []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case map[string]any:
		return appendCanonicalObject(out, x)
	case []any:
		out = append(out, '[')
		for i, e := range x {
			if i > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = appendCanonical(out, e); !ok {
				return nil, false
			}
		}
		return append(out, ']'), true
	case string:
		return appendJCSString(out, x)
	case bool:
		return strconv.AppendBool(out, x), true
	case nil:
		return append(out, "null"...), true
	case json.Number:
		// ParseFloat takes more than JSON's grammar (hex, Inf); encoding/json
		// refuses those, so they stay with the slow path's error.
		if !json.Valid([]byte(x)) {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, false
		}
		return appendNumber(out, f)
	case int:
		return appendInt(out, int64(x))
	case int64:
		return appendInt(out, x)
	case int32:
		return strconv.AppendInt(out, int64(x), 10), true
	}
	return nil, false
}

// appendCanonicalObject writes m's members sorted by key. RFC 8785 sorts
// by UTF-16 code units, which is the keys' byte order unless a key holds
// a character past U+FFFF (a 4-byte UTF-8 sequence) or invalid UTF-8:
// those are left to jcs.
func appendCanonicalObject(out []byte, m map[string]any) ([]byte, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !sortsAsUTF16(k) {
			return nil, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendJCSString(out, k); !ok {
			return nil, false
		}
		out = append(out, ':')
		if out, ok = appendCanonical(out, m[k]); !ok {
			return nil, false
		}
	}
	return append(out, '}'), true
}

func sortsAsUTF16(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= 0xf0 {
			return false
		}
	}
	return utf8.ValidString(k)
}

func appendInt(out []byte, n int64) ([]byte, bool) {
	if n > maxExactInt || n < -maxExactInt {
		return appendNumber(out, float64(n))
	}
	return strconv.AppendInt(out, n, 10), true
}

func appendNumber(out []byte, f float64) ([]byte, bool) {
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return nil, false
	}
	return append(out, s...), true
}

// appendJCSString writes s as RFC 8785 does: '"' and '\' escaped, the
// control characters as \b \t \n \f \r or \u00xx (lower-case hex), every
// other character as itself. Invalid UTF-8 (which encoding/json replaces
// before jcs sees it) is left to the slow path.
func appendJCSString(out []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	out = append(out, '"')
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] != '"' && s[i] != '\\'
	}
	if plain { // most strings: ids, codes, amounts' currencies
		out = append(out, s...)
		return append(out, '"'), true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\t':
			out = append(out, '\\', 't')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c < 0x20:
			const hex = "0123456789abcdef"
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"'), true
}
