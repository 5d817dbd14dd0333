package toolkit

import "strings"

// The string rules (docs/tools.md#sanitising) run up to eight regexps over
// every string of every input, output and log line, and most of those
// strings are ids, codes, dates and amounts that no pattern can match.
// One pass over the bytes records what each pattern cannot match without;
// a regexp runs only when its necessary condition holds, so a string is
// changed exactly as before (FuzzSanitizeTextFastPath compares the two).
//
// Every pattern is ASCII in what the conditions rely on: \d is [0-9] and
// \s is [\t\n\f\r ] in Go's regexp syntax, and case folding ((?i)) maps no
// non-ASCII rune to a space, a digit, 'b' or 'B'.

// textShape is what one pass over a string's bytes learns.
type textShape struct {
	// space: a ' '; ws: any \s byte; b: a 'b' or 'B'.
	space, ws, b   bool
	at, underscore bool
	digits         int

	// What the digit patterns need beyond a count of digits, which every
	// timestamp and sha256 hex string has enough of, so a count alone
	// would let every such string through to the regexp:
	// run3Sep: a run of exactly three digits followed by '-' or '.';
	// run3Dash: the same, followed by '-'; digitAD: two digits followed by
	// 'A'–'D' and a word boundary, directly or after one \s byte (the end
	// of a NINO, \d{2}\s?[A-D]\b, which ids such as ULIDs rarely have);
	// plusDigit, parenDigit: a
	// digit right after '+', '('; maxRun: the longest run of digits;
	// maxChain: the most digits in a row joined by at most one ' ' or '-'
	// between two.
	run3Sep, run3Dash, digitAD bool
	plusDigit, parenDigit      bool
	maxRun, maxChain           int
}

func scanText(t string) textShape {
	var sh textShape
	run, chain := 0, 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			if run == 3 && (c == '-' || c == '.') {
				sh.run3Sep = true
				sh.run3Dash = sh.run3Dash || c == '-'
			}
			if run >= 2 && (endsAD(t, i) || isSpaceByte(c) && endsAD(t, i+1)) {
				sh.digitAD = true
			}
			run = 0
			// A chain survives one ' ' or '-' between two digits.
			if chain > 0 && !((c == ' ' || c == '-') && i > 0 && isDigit(t[i-1]) && i+1 < len(t) && isDigit(t[i+1])) {
				chain = 0
			}
		}
		switch {
		case isDigit(c):
			sh.digits++
			run++
			chain++
			sh.maxRun = max(sh.maxRun, run)
			sh.maxChain = max(sh.maxChain, chain)
			if i > 0 && t[i-1] == '+' {
				sh.plusDigit = true
			}
			if i > 0 && t[i-1] == '(' {
				sh.parenDigit = true
			}
		case c == ' ':
			sh.space, sh.ws = true, true
		case c == '\t' || c == '\n' || c == '\f' || c == '\r':
			sh.ws = true
		case c == 'b' || c == 'B':
			sh.b = true
		case c == '@':
			sh.at = true
		case c == '_':
			sh.underscore = true
		}
	}
	return sh
}

// endsAD reports whether t[i] is 'A'–'D' and ends a word ([A-D]\b).
func endsAD(t string, i int) bool {
	return i < len(t) && t[i] >= 'A' && t[i] <= 'D' && (i+1 == len(t) || !isWordByte(t[i+1]))
}

// isWordByte is \w, what \b tells from the rest.
func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isSpaceByte is \s in Go's regexp syntax.
func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// injectionPattern: every alternative holds a space and one of five
// phrases, in any case: "ignore ", "(dis)regard ", "you are now", "call the
// tool", "reveal ". None has a 'k' or an 's', the only ASCII letters that
// (?i) folds to a non-ASCII rune (K, ſ), so an ASCII case-insensitive
// search finds every match.
func mayInjection(sh *textShape, t string) bool {
	if !sh.space {
		return false
	}
	for _, p := range injectionPhrases {
		if containsFoldASCII(t, p) {
			return true
		}
	}
	return false
}

var injectionPhrases = []string{"ignore ", "regard ", "you are now", "call the tool", "reveal "}

// containsFoldASCII reports whether t holds p, a lower-case ASCII phrase,
// ignoring the case of its letters.
func containsFoldASCII(t, p string) bool {
	for i := 0; i+len(p) <= len(t); i++ {
		j := 0
		for j < len(p) && (t[i+j] == p[j] || p[j] >= 'a' && p[j] <= 'z' && t[i+j]|0x20 == p[j]) {
			j++
		}
		if j == len(p) {
			return true
		}
	}
	return false
}

// urlPattern needs "://".
func mayURL(_ *textShape, t string) bool { return strings.Contains(t, "://") }

// bearerPattern needs a \s and the word "bearer" or "basic" in any case;
// (?i) folds the 's' of basic to 'ſ' too (U+017F), none of the other
// letters to anything but their ASCII other case.
func mayBearer(sh *textShape, t string) bool {
	return sh.b && sh.ws && (containsFoldASCII(t, "bearer") || containsBasic(t))
}

// containsBasic reports whether t holds "basic" in any case, its 's' also
// spelt 'ſ'.
func containsBasic(t string) bool {
	for i := 0; i+5 <= len(t); i++ {
		if t[i]|0x20 != 'b' || t[i+1]|0x20 != 'a' {
			continue
		}
		j := i + 2
		switch {
		case t[j]|0x20 == 's':
			j++
		case strings.HasPrefix(t[j:], "ſ"):
			j += len("ſ")
		default:
			continue
		}
		if j+2 <= len(t) && t[j]|0x20 == 'i' && t[j+1]|0x20 == 'c' {
			return true
		}
	}
	return false
}

// keyPattern (case-sensitive): sk_/rk_/pk_ keys hold "_live_" or
// "_test_", the others "whsec_", "gh" and one of pousr and '_', "AKIA",
// "xox" or "eyJ". Most strings with a '_' (enum values, ids, tool names)
// hold none of them.
func mayKey(sh *textShape, t string) bool {
	if sh.underscore && (strings.Contains(t, "_live_") || strings.Contains(t, "_test_") ||
		strings.Contains(t, "whsec_") || containsGitHubPrefix(t)) {
		return true
	}
	return strings.Contains(t, "AKIA") || strings.Contains(t, "xox") || strings.Contains(t, "eyJ")
}

// containsGitHubPrefix reports whether t holds gh[pousr]_.
func containsGitHubPrefix(t string) bool {
	for i := strings.Index(t, "gh"); i >= 0 && i+4 <= len(t); {
		if strings.IndexByte("pousr", t[i+2]) >= 0 && t[i+3] == '_' {
			return true
		}
		next := strings.Index(t[i+1:], "gh")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// emailPattern needs '@'.
func mayEmail(sh *textShape, _ string) bool { return sh.at }

// nationalIDPattern: an SSN (9 digits) starts with \b\d{3}-, a run of
// exactly three digits and a '-'; a NINO (6 digits) ends with a digit, an
// optional \s and [A-D]\b; a PRC id (18) has a run of 17 digits.
func mayNationalID(sh *textShape, _ string) bool {
	return sh.digits >= 6 && (sh.run3Dash || sh.digitAD || sh.maxRun >= 17)
}

// cardPattern needs 13 digits in a chain: \d(?:[ -]?\d){12,18}.
func mayCard(sh *textShape, _ string) bool { return sh.digits >= 13 && sh.maxChain >= 13 }

// phonePattern: the international form is '+' right before a digit, and
// at least 2 digits; the North-American forms have 10 digits and start
// with '(' before a digit, or with \b\d{3}[.-], a run of exactly three
// digits and a '.' or '-'.
func mayPhone(sh *textShape, _ string) bool {
	return (sh.plusDigit && sh.digits >= 2) || (sh.digits >= 10 && (sh.parenDigit || sh.run3Sep))
}
