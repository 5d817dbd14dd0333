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
	space, ws, b         bool
	at, plus, underscore bool
	digits               int
}

func scanText(t string) textShape {
	var sh textShape
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			sh.digits++
		case c == ' ':
			sh.space, sh.ws = true, true
		case c == '\t' || c == '\n' || c == '\f' || c == '\r':
			sh.ws = true
		case c == 'b' || c == 'B':
			sh.b = true
		case c == '@':
			sh.at = true
		case c == '+':
			sh.plus = true
		case c == '_':
			sh.underscore = true
		}
	}
	return sh
}

// injectionPattern: every alternative holds a space ("ignore …", "you are
// now", "call the tool", …); the caller checks sh.space.

// urlPattern needs "://".
func mayURL(_ *textShape, t string) bool { return strings.Contains(t, "://") }

// bearerPattern needs "b"/"B" (bearer, basic) and a \s after the word.
func mayBearer(sh *textShape, _ string) bool { return sh.b && sh.ws }

// keyPattern: sk_/rk_/pk_, whsec_ and gh?_ hold '_'; the others start with
// AKIA, xox or eyJ (case-sensitive).
func mayKey(sh *textShape, t string) bool {
	return sh.underscore || strings.Contains(t, "AKIA") || strings.Contains(t, "xox") || strings.Contains(t, "eyJ")
}

// emailPattern needs '@'.
func mayEmail(sh *textShape, _ string) bool { return sh.at }

// nationalIDPattern: an SSN has 9 digits, a NINO 6, a PRC id 17.
func mayNationalID(sh *textShape, _ string) bool { return sh.digits >= 6 }

// cardPattern needs 13 digits.
func mayCard(sh *textShape, _ string) bool { return sh.digits >= 13 }

// phonePattern: the international form is '+' and at least 2 digits, the
// North-American forms have 10 digits.
func mayPhone(sh *textShape, _ string) bool { return (sh.plus && sh.digits >= 2) || sh.digits >= 10 }
