package docs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// citation is docs/<page>.md, optionally with #<anchor>, as comments write it.
var citation = regexp.MustCompile(`docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?`)

// pageLink is a link between the pages themselves: ](page.md#anchor) or ](#anchor).
var pageLink = regexp.MustCompile(`\]\(([A-Za-z0-9_.-]+\.md)?(?:#([A-Za-z0-9_-]+))?\)`)

// skipDirs are never scanned: VCS data, local state, captured histories.
var skipDirs = map[string]bool{".git": true, ".data": true, ".bin": true, "node_modules": true, "testdata": true}

// cites reports whether a file of this name can hold citations we check.
func cites(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".sql", ".sh", ".yaml", ".yml", ".json":
		return true
	case ".md":
		return strings.HasPrefix(name, "README")
	}
	return name == "Makefile" || name == "Dockerfile"
}

// slug is GitHub's heading anchor: lower case, letters, digits, '-' and '_'
// kept, spaces become '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the heading anchors of a markdown page, with GitHub's -1, -2
// suffixes for repeated headings; headings inside code fences do not count.
func anchors(page string) (map[string]bool, error) {
	f, err := os.Open(page)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, seen := map[string]bool{}, map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimRight(strings.TrimLeft(line, "#"), "# ")
		s := slug(text)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out, sc.Err()
}

// checker resolves citations against the pages in dir.
type checker struct {
	dir   string
	pages map[string]map[string]bool
}

// check returns a problem with page#anchor, or "".
func (c *checker) check(page, anchor string) string {
	a, ok := c.pages[page]
	if !ok {
		var err error
		a, err = anchors(filepath.Join(c.dir, page))
		if err != nil {
			a = nil
		}
		c.pages[page] = a
	}
	switch {
	case a == nil:
		return "docs/" + page + " does not exist"
	case anchor != "" && !a[anchor]:
		return "docs/" + page + " has no section #" + anchor
	}
	return ""
}

// scan checks every citation in text, reporting problems as file:line.
func (c *checker) scan(name, text string, re *regexp.Regexp, self string) []string {
	var bad []string
	for i, line := range strings.Split(text, "\n") {
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			page, anchor := m[1], m[2]
			if page == "" {
				page = self
			}
			if page == "" || strings.Contains(page, "/") {
				continue
			}
			if p := c.check(page, anchor); p != "" {
				bad = append(bad, fmt.Sprintf("%s:%d: %s", name, i+1, p))
			}
		}
	}
	return bad
}

func TestCitationsNameExistingSections(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{dir: ".", pages: map[string]map[string]bool{}}
	var bad []string
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !cites(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("docs", "docs_test.go") { // its broken examples are on purpose
			return nil
		}
		found := c.scan(rel, string(b), citation, "")
		n += len(citation.FindAllIndex(b, -1))
		bad = append(bad, found...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("found no docs/ citations at all: is the scan looking at the repository?")
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func TestPageLinksNameExistingSections(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{dir: ".", pages: map[string]map[string]bool{}}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range c.scan("docs/"+p, string(b), pageLink, p) {
			t.Error(bad)
		}
	}
}

func TestCheckerCatchesBrokenCitations(t *testing.T) {
	c := &checker{dir: ".", pages: map[string]map[string]bool{}}
	text := "// see docs/errors.md#retryable-codes and docs/errors.md#no-such-section\n" +
		"-- and docs/no-such-page.md#codes, docs/envelope.md"
	got := c.scan("x.go", text, citation, "")
	want := []string{
		"x.go:1: docs/errors.md has no section #no-such-section",
		"x.go:2: docs/no-such-page.md does not exist",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Retryable codes":               "retryable-codes",
		"Two-phase audit":               "two-phase-audit",
		"`tools/call` and errors":       "toolscall-and-errors",
		"MCP invariants":                "mcp-invariants",
		"Approvals (human in the loop)": "approvals-human-in-the-loop",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
