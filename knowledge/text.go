package knowledge

import (
	"regexp"
	"strings"
	"unicode"
)

// maxQueryTerms bounds the OR query sent to PostgreSQL; a 500-character
// claim has fewer words than this anyway.
const maxQueryTerms = 64

// normalizeClaim is the cache key form of a claim: lower case, person ids
// folded, runs of white space collapsed, trailing sentence punctuation and
// surrounding quotes dropped. Two claims that differ only in these ways get
// the same answer.
func normalizeClaim(claim string) string {
	s := strings.ToLower(strings.TrimSpace(claim))
	s = personIDPattern.ReplaceAllString(s, "person.")
	s = strings.Join(strings.Fields(s), " ")
	return strings.Trim(s, " \t\"'`?!.。？！")
}

// words splits text into lower-case words of letters and digits; every other
// character (dots and underscores of requirement keys included) separates.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// orQuery turns a claim into websearch_to_tsquery input that matches any of
// its words ("a or b or c"). websearch_to_tsquery on the raw claim would AND
// every word, and a claim phrased differently from the runbook would then
// match nothing; ranking, not matching, decides relevance here. Words are
// letters and digits only, so no websearch operator ("-", quotes) survives;
// the word "or" itself is dropped because it is the operator.
func orQuery(claim string) string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range words(claim) {
		if w == "or" || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return strings.Join(terms, " or ")
}

// fillerStems are English-stemmed words that questions and agent claims use
// without saying anything about the topic ("what do I need to do", "please
// explain"). PostgreSQL's english configuration already drops true stop
// words; these are not on its list. They get no weight in coverage.
var fillerStems = map[string]bool{
	"need": true, "want": true, "pleas": true, "help": true, "tell": true,
	"explain": true, "mean": true, "happen": true, "get": true, "make": true,
	"know": true, "ask": true, "say": true, "still": true, "also": true,
	"like": true, "must": true, "may": true, "might": true, "could": true,
	"would": true, "shall": true, "thing": true, "someth": true, "way": true,
	"fix": true, "requir": true, "stripe": true,
}

// Requirement keys: lower-case identifiers with at least one dot or
// underscore, as Stripe writes them in requirements lists
// (individual.verification.document, tos_acceptance.ip, past_due).
var (
	keyPattern      = regexp.MustCompile(`[a-z0-9]+(?:[._][a-z0-9]+)+`)
	personIDPattern = regexp.MustCompile(`\bperson_[a-z0-9]+\.`)
	rolePattern     = regexp.MustCompile(`^(individual|representative|owners|directors|executives|person)\.`)
)

// isKey reports whether k looks like an API identifier rather than a plain
// word or phrase ("listed", "bank account"); only identifiers take part in
// exact key matching, plain words are left to full-text search.
func isKey(k string) bool {
	return keyPattern.FindString(k) == k && strings.ContainsAny(k, "._")
}

// claimKeys extracts the requirement keys a claim mentions, with Stripe's
// person ids folded into "person." (person_1AbC.verification.document).
func claimKeys(claim string) []string {
	s := personIDPattern.ReplaceAllString(strings.ToLower(claim), "person.")
	seen := map[string]bool{}
	var out []string
	for _, k := range keyPattern.FindAllString(s, -1) {
		if strings.ContainsAny(k, "._") && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// roleNormal folds the person-role prefix of a key into "person.", so that
// owners.address.city and individual.address.city meet.
func roleNormal(k string) string { return rolePattern.ReplaceAllString(k, "person.") }

// family is the first two dot segments of a key with three or more
// (individual.dob.day → individual.dob); "" otherwise.
func family(k string) string {
	parts := strings.Split(k, ".")
	if len(parts) < 3 {
		return ""
	}
	return parts[0] + "." + parts[1]
}
