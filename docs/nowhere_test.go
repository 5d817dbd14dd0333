package docs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// pointsNowhere is a reference a reader of the repository cannot follow:
// a design seed ("seed 003 §4", "seed-002"), a tracker issue ("issue 12",
// "issue #12") or a review's numbered finding ("finding 7"). A comment
// says the reason itself, or cites a docs/ page that does.
var pointsNowhere = regexp.MustCompile(`(?i)\bseed[ -]?0\d\d\b|\bissue ?#?\d+\b|\bfindings? \d+\b`)

// namedAfterNowhere is a test, benchmark, fuzz target or example named
// after a seed, an issue or a finding instead of the behaviour it checks.
var namedAfterNowhere = regexp.MustCompile(`^func (?:Test|Benchmark|Fuzz|Example)\w*?(?:Seed\d|Issue\d|Finding\d)`)

// nowhere returns the lines of one Go file that point nowhere: in a
// non-test file its comments, in a test file its test names.
func nowhere(rel, comments, src string) []string {
	var bad []string
	if strings.HasSuffix(rel, "_test.go") {
		for i, line := range strings.Split(src, "\n") {
			if namedAfterNowhere.MatchString(line) {
				bad = append(bad, fmt.Sprintf("%s:%d: name the test by the behaviour it checks: %s", rel, i+1, strings.TrimSuffix(line, " {")))
			}
		}
		return bad
	}
	for i, line := range strings.Split(comments, "\n") {
		if m := pointsNowhere.FindString(line); m != "" {
			bad = append(bad, fmt.Sprintf("%s:%d: %q points nowhere: say the reason or cite docs/", rel, i+1, m))
		}
	}
	return bad
}

// TestNothingCitesSeedsIssuesOrFindings keeps comments and test names
// readable without the project's tracker: no non-test Go comment cites a
// seed, an issue or a finding, and no test is named after one.
func TestNothingCitesSeedsIssuesOrFindings(t *testing.T) {
	var bad []string
	files := 0
	repoGo(t, func(rel, comments, src string) {
		files++
		bad = append(bad, nowhere(rel, comments, src)...)
	})
	if files == 0 {
		t.Fatal("found no Go files: is the scan looking at the repository?")
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func TestNowhereCatchesSeedsIssuesAndFindings(t *testing.T) {
	src := "package x\n\n// checkCall is seed 003 §5.2.2's check (issue 12; finding 7).\n" +
		"// TestFinding2_X is fine in a comment of a test file, not in code.\n" +
		"var s = \"issue 12 in a string is not a comment\"\n" +
		"// Seeds the corpus; issues a command; golang/go#75804 is a link.\n"
	got := nowhere("x.go", goComments("x.go", src), src)
	want := []string{
		`x.go:3: "seed 003" points nowhere: say the reason or cite docs/`,
	}
	wantLines(t, got, want)
	test := "package x\n\nfunc TestSeed003Contract(t *testing.T) {\n}\n\nfunc TestFinding2_PowerBank(t *testing.T) {\n}\n\nfunc TestPowerBankByRoad(t *testing.T) {\n}\n"
	got = nowhere("x_test.go", goComments("x_test.go", test), test)
	want = []string{
		"x_test.go:3: name the test by the behaviour it checks: func TestSeed003Contract(t *testing.T)",
		"x_test.go:6: name the test by the behaviour it checks: func TestFinding2_PowerBank(t *testing.T)",
	}
	wantLines(t, got, want)
}
