package toolkit

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// MaxTextBytes caps any one string in a tool's output
// (docs/tools.md#sanitising): longer text is cut and the envelope warns
// truncated_output.
const MaxTextBytes = 4096

// Placeholders that replace what sanitising removes. They are stable so
// tests and dashboards can count them.
const (
	maskSecret    = "***"
	redactedEmail = "[redacted:email]"
	redactedPhone = "[redacted:phone]"
	redactedCard  = "[redacted:card]"
	redactedID    = "[redacted:national_id]"
)

var (
	// Keys whose value is a credential whatever it looks like (IsSecretField).
	secretKey = regexp.MustCompile(`(?i)^(` + strings.Join(secretKeys, "|") + `)$`)
	// Query parameters that make a URL a bearer credential (signed URLs,
	// OAuth redirects, cloud signatures).
	secretParam = regexp.MustCompile(`(?i)^(access_token|token|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|se|sp|sv|code|key|api_key|apikey|client_secret|password)$`)

	urlPattern    = regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	bearerPattern = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}`)
	// Stripe, AWS, GitHub, Slack and JWT-shaped credentials.
	keyPattern = regexp.MustCompile(`\b((sk|rk|pk)_(live|test)_[0-9A-Za-z]{8,}|whsec_[0-9A-Za-z]{8,}|AKIA[0-9A-Z]{16}|gh[pousr]_[0-9A-Za-z]{20,}|xox[abpr]-[0-9A-Za-z-]{10,}|eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,})`)

	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	// International (+ and 8–15 digits) or North-American formatted numbers.
	phonePattern = regexp.MustCompile(`\+\d[\d\s().-]{7,18}\d|\(\d{3}\)\s?\d{3}[\s.-]\d{4}\b|\b\d{3}[.-]\d{3}[.-]\d{4}\b`)
	// 13–19 digits, optionally grouped; Luhn decides.
	cardPattern = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
	// US SSN, UK National Insurance number, PRC resident id.
	nationalIDPattern = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b|\b[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b|\b\d{17}[\dXx]\b`)
	// Text that tries to steer an agent (docs/tools.md#sanitising): kept, but
	// tainted.
	injectionPattern = regexp.MustCompile(`(?i)(ignore (all |any )?(previous|prior|above) instructions|disregard (the )?(system|previous) prompt|you are now|call the tool|reveal (your|the) (system prompt|secrets?))`)
)

// Sanitized is the result of sanitising a decoded JSON value.
type Sanitized struct {
	Value    any
	Warnings []string
	// Changed is true when anything was masked, redacted or truncated: the
	// raw output then holds something the clear copy must not.
	Changed bool
	Tainted bool
}

type sanitizer struct {
	warnings map[string]bool
	changed  bool
	tainted  bool
}

// SecretMask is what a masked secret reads as.
const SecretMask = maskSecret

// Sanitize masks secrets, redacts PII, truncates long text and flags
// instruction-like text in a decoded JSON value (maps, slices, strings,
// numbers, bools, nil). It never mutates its input, and shares with it
// every map and slice whose contents it left alone: most values change
// nowhere, and copying them was a third of sanitising's cost
// (docs/performance.md#the-tool-pipeline).
func Sanitize(v any) Sanitized {
	s := &sanitizer{warnings: map[string]bool{}}
	out, _ := s.value("", v)
	w := make([]string, 0, len(s.warnings))
	for k := range s.warnings {
		w = append(w, k)
	}
	sort.Strings(w)
	return Sanitized{Value: out, Warnings: w, Changed: s.changed, Tainted: s.tainted}
}

// value is v sanitised, and whether that differs from v (then a new map
// or slice wherever something below it changed).
func (s *sanitizer) value(key string, v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, val := range x {
			clean, changed := s.value(k, val)
			if changed && out == nil {
				out = make(map[string]any, len(x))
				for k2, v2 := range x {
					out[k2] = v2
				}
			}
			if out != nil {
				out[k] = clean
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, val := range x {
			clean, changed := s.value(key, val)
			if changed && out == nil {
				out = make([]any, len(x))
				copy(out, x)
			}
			if out != nil {
				out[i] = clean
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case string:
		if x != "" && IsSecretField(key) {
			s.flag(WarnSecretMasked)
			return maskSecret, true
		}
		clean := s.text(x)
		return clean, clean != x
	default:
		return v, false
	}
}

func (s *sanitizer) flag(warning string) {
	s.warnings[warning] = true
	s.changed = true
}

// SanitizeText applies the string rules to one piece of text; log fields
// and error messages go through it too.
func SanitizeText(text string) string {
	s := &sanitizer{warnings: map[string]bool{}}
	return s.text(text)
}

func (s *sanitizer) text(t string) string {
	sh := scanText(t)
	if mayInjection(&sh, t) && injectionPattern.MatchString(t) {
		s.tainted = true
		s.warnings[WarnTaintedText] = true
	}
	for _, r := range textRules {
		if !r.may(&sh, t) {
			continue
		}
		if out, changed := s.replace(t, r.re, r.warning, r.fn); changed {
			// A replacement brings new bytes (placeholders, a re-encoded
			// URL): the later rules' pre-checks must see them.
			t, sh = out, scanText(out)
		}
	}
	if len(t) > MaxTextBytes {
		cut := MaxTextBytes
		for cut > 0 && !utf8Start(t[cut]) {
			cut--
		}
		t = t[:cut] + "…"
		s.flag(WarnTruncatedOutput)
	}
	return t
}

// textRule is one replacing pattern of the string rules, in the order they
// apply. may is a necessary condition for re to match (textshape.go): when
// it is false the regexp cannot change the text and is not run.
type textRule struct {
	re      *regexp.Regexp
	warning string
	fn      func(string) string
	may     func(sh *textShape, t string) bool
}

var textRules = []textRule{
	{urlPattern, WarnSecretMasked, maskURL, mayURL},
	{bearerPattern, WarnSecretMasked, func(m string) string {
		return strings.SplitN(m, " ", 2)[0] + " " + maskSecret
	}, mayBearer},
	{keyPattern, WarnSecretMasked, constant(maskSecret), mayKey},
	{emailPattern, WarnPIIRedacted, constant(redactedEmail), mayEmail},
	{nationalIDPattern, WarnPIIRedacted, constant(redactedID), mayNationalID},
	{cardPattern, WarnPIIRedacted, func(m string) string {
		if luhn(m) {
			return redactedCard
		}
		return m
	}, mayCard},
	{phonePattern, WarnPIIRedacted, constant(redactedPhone), mayPhone},
}

// replace substitutes every match of re through fn and records warning
// when anything actually changed.
func (s *sanitizer) replace(t string, re *regexp.Regexp, warning string, fn func(string) string) (string, bool) {
	out := re.ReplaceAllStringFunc(t, fn)
	if out == t {
		return t, false
	}
	s.flag(warning)
	return out, true
}

func constant(v string) func(string) string { return func(string) string { return v } }

// maskURL keeps scheme, host and path (useful for support) and masks the
// values of credential-like query parameters and any user info.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if u.User != nil {
		u.User = url.User(maskSecret)
		changed = true
	}
	q := u.Query()
	for k := range q {
		if secretParam.MatchString(k) {
			q[k] = []string{maskSecret}
			changed = true
		}
	}
	if !changed {
		return raw
	}
	// Encode escapes the mask; keep it readable for support staff.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "%2A%2A%2A", maskSecret)
	return u.String()
}

func luhn(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n >= 13 && sum%10 == 0
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
