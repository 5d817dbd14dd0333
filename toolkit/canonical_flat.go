package toolkit

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// A flat object of strings, integers and booleans (an evidence row's
// content, a draft row's, a seal's document) is canonical once its keys are
// sorted and its strings escaped as RFC 8785 §3.2.2.2 says; encoding it to
// JSON and parsing that back through jcs cost about 50 µs a row, most of a
// row's hash (docs/performance.md#the-tool-pipeline). canonicalFlat writes
// those bytes directly and answers false for anything else, which
// Canonical then hands to jcs as before. TestCanonicalFlatIsJCS and
// FuzzCanonicalFlat compare the two.

// maxExactInt is 2^53: jcs reads numbers as IEEE doubles, so an integer
// beyond it is written as the nearest double, which only jcs spells.
const maxExactInt = 1 << 53

// canonicalFlat is Canonical(m) when every key of m is printable ASCII
// without '"' or '\' and every value a string (valid UTF-8), a bool, or an
// integer of at most 2^53 in magnitude; ok is false otherwise.
func canonicalFlat(m map[string]any) (out []byte, ok bool) {
	keys := make([]string, 0, len(m))
	size := 2
	for k, v := range m {
		if !plainKey(k) {
			return nil, false
		}
		keys = append(keys, k)
		size += len(k) + 4
		if s, isString := v.(string); isString {
			size += len(s) + 2
		} else {
			size += 20
		}
	}
	// ASCII keys: byte order is the UTF-16 code unit order RFC 8785 sorts by.
	slices.Sort(keys)
	out = make([]byte, 0, size)
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		if out, ok = appendFlatValue(out, m[k]); !ok {
			return nil, false
		}
	}
	return append(out, '}'), true
}

func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func appendFlatValue(out []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return appendJCSString(out, x)
	case bool:
		return strconv.AppendBool(out, x), true
	case int:
		return appendExactInt(out, int64(x))
	case int64:
		return appendExactInt(out, x)
	case int32:
		return strconv.AppendInt(out, int64(x), 10), true
	}
	return out, false
}

func appendExactInt(out []byte, n int64) ([]byte, bool) {
	if n > maxExactInt || n < -maxExactInt {
		return out, false
	}
	return strconv.AppendInt(out, n, 10), true
}

// appendJCSString writes s as RFC 8785 does: '"' and '\' escaped, the
// control characters as \b \t \n \f \r or \u00xx (lower-case hex), every
// other character as itself. Invalid UTF-8 (which encoding/json replaces
// before jcs sees it) is left to the slow path.
func appendJCSString(out []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return out, false
	}
	out = append(out, '"')
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
