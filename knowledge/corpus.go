package knowledge

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed corpus/*.md
var corpusFS embed.FS

// corpusDir is where the corpus lives in the repository; citations name
// runbook sections by this path, never by an absolute or internal location.
const corpusDir = "knowledge/corpus"

// allowedHosts are the public hosts a section may cite.
var allowedHosts = map[string]bool{
	"docs.stripe.com":    true,
	"stripe.com":         true,
	"support.stripe.com": true,
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,79}$`)

// Section is one runbook section of the corpus.
type Section struct {
	ID      string
	Title   string
	URL     string
	Section string
	Keys    []string
	Body    string
	// Path is the section's file in the repository, e.g.
	// knowledge/corpus/external-account.md.
	Path string
}

// Corpus is the parsed runbook corpus.
type Corpus struct {
	Sections []Section
	// Version is "kb-" and the first 16 hex digits of a SHA-256 over every
	// file name and content, in name order.
	Version string
}

var embedded = sync.OnceValues(func() (*Corpus, error) { return ParseFS(corpusFS, "corpus") })

// Embedded returns the corpus compiled into the binary.
func Embedded() (*Corpus, error) { return embedded() }

// ParseFS parses every *.md file of dir in fsys as a corpus.
func ParseFS(fsys fs.FS, dir string) (*Corpus, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("knowledge: no corpus files in %s", dir)
	}
	sort.Strings(names)
	h := sha256.New()
	c := &Corpus{}
	seen := map[string]bool{}
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		base := path.Base(name)
		fmt.Fprintf(h, "%s\x00%d\x00", base, len(raw))
		h.Write(raw)
		s, err := parseSection(base, string(raw))
		if err != nil {
			return nil, fmt.Errorf("knowledge: %s: %w", base, err)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("knowledge: duplicate section id %q", s.ID)
		}
		seen[s.ID] = true
		c.Sections = append(c.Sections, s)
	}
	c.Version = "kb-" + hex.EncodeToString(h.Sum(nil))[:16]
	return c, nil
}

func parseSection(base, raw string) (Section, error) {
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	if !strings.HasPrefix(raw, "---\n") {
		return Section{}, fmt.Errorf("missing front matter")
	}
	rest := raw[len("---\n"):]
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		return Section{}, fmt.Errorf("unterminated front matter")
	}
	front, body := rest[:end], strings.TrimSpace(rest[end+len("\n---\n"):])
	s := Section{Body: body, Path: corpusDir + "/" + base}
	sc := bufio.NewScanner(strings.NewReader(front))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return Section{}, fmt.Errorf("front matter line %q is not name: value", line)
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(name) {
		case "id":
			s.ID = value
		case "title":
			s.Title = value
		case "url":
			s.URL = value
		case "section":
			s.Section = value
		case "keys":
			for _, k := range strings.Split(value, ",") {
				if k = strings.TrimSpace(k); k != "" {
					s.Keys = append(s.Keys, k)
				}
			}
		default:
			return Section{}, fmt.Errorf("unknown front matter field %q", name)
		}
	}
	switch {
	case !idPattern.MatchString(s.ID):
		return Section{}, fmt.Errorf("bad or missing id %q", s.ID)
	case s.ID+".md" != base:
		return Section{}, fmt.Errorf("id %q does not match file name", s.ID)
	case s.Title == "":
		return Section{}, fmt.Errorf("missing title")
	case s.Section == "":
		return Section{}, fmt.Errorf("missing section")
	case len(s.Keys) == 0:
		return Section{}, fmt.Errorf("missing keys")
	case len(s.Body) < 200:
		return Section{}, fmt.Errorf("body too short (%d bytes)", len(s.Body))
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Scheme != "https" || !allowedHosts[u.Host] || u.User != nil || u.RawQuery != "" {
		return Section{}, fmt.Errorf("url %q is not a public Stripe documentation URL", s.URL)
	}
	return s, nil
}
