package docs

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// citation is a repository path of a markdown page, optionally with
// #<anchor>, as comments and pages write it in running text:
// docs/evidence.md#staged-batches, deploy/SCALING.md#rolling-out-a-build.
// The path is read from the repository's root; it starts with a letter, so
// a page-relative "../x.md" inside a markdown link is left to mdLink.
var citation = regexp.MustCompile("(?:^|[\\s(`\"'\\[])([A-Za-z][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)*/[A-Za-z0-9_.-]+\\.md)(?:#([A-Za-z0-9_-]+))?")

// readmeSection is the older way of citing the top README by section title:
// README "Architecture", README, "Tests", README.md, section "Docker". The
// title must still be one of README.md's headings.
var readmeSection = regexp.MustCompile(`README(?:\.md)?,?\s*(?:section\s+|\()?\\?"([^"\\]+)\\?"`)

// mdLink is a markdown link's target: ](target) or ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)

// external is a link target with a scheme (https:, mailto:): not checked.
var external = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// skipDirs are never scanned: VCS data, local state, captured histories.
var skipDirs = map[string]bool{".git": true, ".data": true, ".bin": true, "node_modules": true, "testdata": true}

// self is this file: its broken examples are on purpose.
var self = filepath.Join("docs", "docs_test.go")

// cites reports whether a file of this name can hold citations we check.
func cites(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".sql", ".sh", ".yaml", ".yml", ".json", ".mjs", ".txt", ".md":
		return true
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
	sc.Buffer(make([]byte, 1<<20), 1<<20)
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

// checker resolves repository paths and their anchors, caching each page's
// headings (nil: the path does not exist; empty: not a markdown page).
type checker struct {
	root  string
	pages map[string]map[string]bool
}

func newChecker(root string) *checker {
	return &checker{root: root, pages: map[string]map[string]bool{}}
}

// check returns a problem with rel#anchor (rel relative to the root, with
// slashes), or "".
func (c *checker) check(rel, anchor string) string {
	rel = path.Clean(rel)
	a, ok := c.pages[rel]
	if !ok {
		full := filepath.Join(c.root, filepath.FromSlash(rel))
		switch st, err := os.Stat(full); {
		case err != nil || strings.HasPrefix(rel, "../"):
			a = nil
		case st.IsDir() || !strings.HasSuffix(rel, ".md"):
			a = map[string]bool{}
		default:
			if a, err = anchors(full); err != nil {
				a = nil
			}
		}
		c.pages[rel] = a
	}
	switch {
	case a == nil:
		return rel + " does not exist"
	case anchor != "" && !a[anchor]:
		return rel + " has no section #" + anchor
	}
	return ""
}

// scan checks one file's text: running-text citations of pages (from the
// root), README "Section" citations and, in a markdown page, every relative
// link (from the page's folder). Problems are reported as file:line.
func (c *checker) scan(name, text string) []string {
	var bad []string
	md := strings.HasSuffix(name, ".md")
	dir := path.Dir(filepath.ToSlash(name))
	fenced := false
	seen := map[string]bool{}
	report := func(line int, problem string) {
		p := fmt.Sprintf("%s:%d: %s", name, line, problem)
		if problem != "" && !seen[p] {
			seen[p] = true
			bad = append(bad, p)
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if md && strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range citation.FindAllStringSubmatch(line, -1) {
			report(i+1, c.check(m[1], m[2]))
		}
		for _, m := range readmeSection.FindAllStringSubmatch(line, -1) {
			if p := c.check("README.md", slug(m[1])); p != "" {
				report(i+1, fmt.Sprintf("README.md has no section %q", m[1]))
			}
		}
		if !md {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if target == "" || external.MatchString(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			rel := path.Base(name)
			if file != "" {
				rel = file
			}
			report(i+1, c.check(path.Join(dir, rel), anchor))
		}
	}
	return bad
}

// goComments is a Go file's comments only, each on its own line number,
// every other line blank: a string literal in code (a test's fixture path)
// is not a citation.
func goComments(name, src string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return src
	}
	lines := make([]string, strings.Count(src, "\n")+1)
	for _, g := range f.Comments {
		for _, cm := range g.List {
			at := fset.Position(cm.Pos()).Line - 1
			for j, l := range strings.Split(cm.Text, "\n") {
				lines[at+j] += " " + l
			}
		}
	}
	return strings.Join(lines, "\n")
}

// walkRepo calls fn with every file of the repository outside skipDirs,
// by its path relative to the root (with slashes), and returns the root.
func walkRepo(t *testing.T, fn func(rel string, full string) error) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		return fn(filepath.ToSlash(rel), p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// repoFiles calls fn with every file of the repository that can cite; a Go
// file's text is its comments only.
func repoFiles(t *testing.T, fn func(rel, text string)) string {
	return walkRepo(t, func(rel, full string) error {
		if !cites(path.Base(rel)) || rel == filepath.ToSlash(self) {
			return nil
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		text := string(b)
		if strings.HasSuffix(rel, ".go") {
			text = goComments(full, text)
		}
		fn(rel, text)
		return nil
	})
}

// repoGo calls fn with every Go file of the repository but this package's
// tests (their examples are broken on purpose): its comments, as
// goComments gives them, and its source.
func repoGo(t *testing.T, fn func(rel, comments, src string)) string {
	return walkRepo(t, func(rel, full string) error {
		if !strings.HasSuffix(rel, ".go") || (strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		fn(rel, goComments(full, string(b)), string(b))
		return nil
	})
}

// TestCitationsAndLinksResolve checks every page a comment, script, config
// or page cites (docs/evidence.md#staged-batches), every README "Section"
// citation, and every relative link of every markdown page: the file exists
// and the #anchor is one of its headings.
func TestCitationsAndLinksResolve(t *testing.T) {
	var c *checker
	var bad []string
	cited, linked := 0, 0
	root := repoFiles(t, func(rel, text string) {
		if c == nil {
			c = newChecker(filepath.Join("..")) // the walk's root, relative to this package
		}
		cited += len(citation.FindAllStringIndex(text, -1))
		if strings.HasSuffix(rel, ".md") {
			linked += len(mdLink.FindAllStringIndex(text, -1))
		}
		bad = append(bad, c.scan(rel, text)...)
	})
	if cited == 0 || linked == 0 {
		t.Fatalf("found %d citations and %d links under %s: is the scan looking at the repository?", cited, linked, root)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func TestCheckerCatchesBrokenCitations(t *testing.T) {
	c := newChecker("..")
	text := "// see docs/errors.md#retryable-codes and docs/errors.md#no-such-section\n" +
		"-- and docs/no-such-page.md#codes, docs/envelope.md\n" +
		"# README \"Architecture\", README \"Safe deploys\"\n" +
		"# deploy/SCALING.md#rolling-out-a-build, deploy/SCALING.md#safe-deploys"
	got := c.scan("x.go", text)
	want := []string{
		"x.go:1: docs/errors.md has no section #no-such-section",
		"x.go:2: docs/no-such-page.md does not exist",
		`x.go:3: README.md has no section "Safe deploys"`,
		"x.go:4: deploy/SCALING.md has no section #safe-deploys",
	}
	wantLines(t, got, want)
}

func TestCheckerCatchesBrokenLinks(t *testing.T) {
	c := newChecker("..")
	text := "[ok](errors.md#codes), [self](#audit-invariants), [img](ui/4-awaiting-approval.png)\n" +
		"[no page](nope.md), [no section](errors.md#nope), [up](../README.md#tests)\n" +
		"[web](https://example.com/x.md#y), [gone](../deploy/NOPE.md)\n" +
		"```\n[in a fence](nope.md)\n```\n" +
		"[no self section](#nope)"
	got := c.scan("docs/mcp.md", text)
	want := []string{
		"docs/mcp.md:2: docs/nope.md does not exist",
		"docs/mcp.md:2: docs/errors.md has no section #nope",
		"docs/mcp.md:3: deploy/NOPE.md does not exist",
		"docs/mcp.md:7: docs/mcp.md has no section #nope",
	}
	wantLines(t, got, want)
}

// wantLines fails the test unless got is want, line for line.
func wantLines(t *testing.T, got, want []string) {
	t.Helper()
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
		"2026-11-23 14:08 UTC: cost":    "2026-11-23-1408-utc-cost",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
