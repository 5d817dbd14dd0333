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

// The invoker decodes each input and output once (jsontree.go), and then
// hashed them by turning them back into bytes for jcs to parse again
// (issue 12). appendCanonical writes the RFC 8785 form straight from the
// decoded value, and says ok=false for anything it does not handle in
// exactly jcs's way, where the caller falls back to jcs itself:
// FuzzCanonicalTree and TestCanonicalTreeMatchesJCS hold the two
// byte-identical.

// canonicalDecoded is Canonical(raw) for tree = decodeJSON(raw), raw one
// JSON value (as json.Marshal writes it; decodeJSON ignores what follows
// the first value, jcs refuses it). The tree
// has lost what jcs refuses and encoding/json forgives: a duplicate key
// (counted: raw has one ':' outside strings per member), invalid UTF-8 and
// lone surrogates (decoded as U+FFFD, which appendCanonical hands back).
func canonicalDecoded(raw []byte, tree any) ([]byte, error) {
	if n, ok := countMembers(tree); ok && n == colonsOutsideStrings(raw) {
		if b, ok := appendCanonical(make([]byte, 0, len(raw)), tree); ok {
			return b, nil
		}
	}
	return Canonical(json.RawMessage(raw))
}

// canonicalValue is Canonical(v) for a value shaped like decodeJSON's (the
// sanitised output and input): json.Marshal then jcs, without either.
func canonicalValue(v any) ([]byte, error) {
	if b, ok := appendCanonical(nil, v); ok {
		return b, nil
	}
	return Canonical(v)
}

func canonicalHashDecoded(raw []byte, tree any) (string, error) {
	b, err := canonicalDecoded(raw, tree)
	if err != nil {
		return "", err
	}
	return HashBytes(b), nil
}

func canonicalHashValue(v any) (string, error) {
	b, err := canonicalValue(v)
	if err != nil {
		return "", err
	}
	return HashBytes(b), nil
}

// appendCanonical appends the JCS form of v: objects with their members
// sorted by UTF-16 code units, numbers as ECMAScript prints a double (jcs's
// own NumberToJSON), strings escaped as jcs escapes them.
func appendCanonical(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return appendJCSString(b, x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || !isJSONNumber(string(x)) {
			return b, false // out of range, or not JSON: jcs says why
		}
		s, err := jcs.NumberToJSON(f)
		if err != nil {
			return b, false
		}
		return append(b, s...), true
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJCSString(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendJCSString quotes s as jcs does: the two-character escapes for
// \ " \b \f \n \r \t, \u00xx for the other control bytes, everything else
// as it is. A string that is not valid UTF-8, or holds U+FFFD (what
// encoding/json decodes a byte or a lone surrogate jcs refuses into), is
// not handled.
func appendJCSString(b []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		return b, false
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"'), true
}

// compareUTF16 orders valid UTF-8 strings by their UTF-16 code units
// (RFC 8785 §3.2.3), which differs from byte order where a character above
// U+FFFF (a surrogate pair, 0xD800…) meets one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		if a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] != b[0] {
				return int(a[0]) - int(b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ha, la := utf16Units(ra)
			hb, lb := utf16Units(rb)
			if ha != hb {
				return ha - hb
			}
			return la - lb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Units is r's first UTF-16 code unit and its second (0 for one unit).
func utf16Units(r rune) (int, int) {
	if r < 0x10000 {
		return int(r), 0
	}
	r -= 0x10000
	return 0xD800 + int(r>>10), 0xDC00 + int(r&0x3FF)
}

// isJSONNumber reports whether s is a number in JSON's grammar (RFC 8259
// §6), which jcs requires and strconv.ParseFloat widens.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// countMembers is the number of members of every object in a decoded
// value; ok=false for a type decodeJSON does not return.
func countMembers(v any) (int, bool) {
	switch x := v.(type) {
	case map[string]any:
		n := len(x)
		for _, e := range x {
			m, ok := countMembers(e)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case []any:
		n := 0
		for _, e := range x {
			m, ok := countMembers(e)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case nil, bool, string, json.Number:
		return 0, true
	}
	return 0, false
}

// colonsOutsideStrings counts the ':' of raw outside its strings: in valid
// JSON, one per object member.
func colonsOutsideStrings(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ':':
			n++
		case '"':
			// Skip the string: to its closing quote, past escapes.
			for i++; i < len(raw); i++ {
				if j := bytes.IndexAny(raw[i:], `"\`); j < 0 {
					i = len(raw)
				} else {
					i += j
				}
				if i >= len(raw) || raw[i] == '"' {
					break
				}
				i++ // the escaped byte
			}
		}
	}
	return n
}
