package compliance

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

//go:embed data/*.json
var dataFS embed.FS

// rule is one verdict with its explanation.
type rule struct {
	Verdict      Verdict  `json:"verdict"`
	Confidence   float64  `json:"confidence"`
	Reason       string   `json:"reason"`
	Message      string   `json:"message"`
	Requirements []string `json:"requirements"`
	Source       string   `json:"source"`
}

// destRule is a rule limited to countries (or the group "EU") and,
// optionally, to modes.
type destRule struct {
	Countries []string `json:"countries"`
	Modes     []Mode   `json:"modes"`
	rule
}

type category struct {
	ID           string         `json:"id"`
	Description  string         `json:"description"`
	HSPrefixes   []string       `json:"hs_prefixes"`
	UNNumbers    []string       `json:"un_numbers"`
	Default      *rule          `json:"default"`
	Modes        map[Mode]*rule `json:"modes"`
	Destinations []destRule     `json:"destinations"`
}

type categoriesFile struct {
	RulesetVersion string     `json:"ruleset_version"`
	Sources        []string   `json:"sources"`
	EUMembers      []string   `json:"eu_members"`
	Categories     []category `json:"categories"`
}

type regionRule struct {
	Country        string   `json:"country"`
	ID             string   `json:"id"`
	Codes          []string `json:"codes"`
	Names          []string `json:"names"`
	PostalPrefixes []string `json:"postal_prefixes"`
	rule
}

type destinationsFile struct {
	RulesetVersion string           `json:"ruleset_version"`
	Sources        []string         `json:"sources"`
	Destinations   map[string]*rule `json:"destinations"`
	Regions        []regionRule     `json:"regions"`
	Origins        map[string]*rule `json:"origins"`
}

type rules struct {
	version      string
	sources      []string
	eu           map[string]bool
	categories   map[string]*category
	byHS         map[string]string
	byUN         map[string]string
	destinations map[string]*rule
	regions      []regionRule
	origins      map[string]*rule
}

func readJSON(name string, v any) error {
	raw, err := dataFS.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("compliance: %s: %w", name, err)
	}
	return nil
}

// validate enforces the invariants the workflow relies on.
func (r *rule) validate(where string) error {
	switch {
	case r.Verdict.severity() < 0:
		return fmt.Errorf("compliance: %s: bad verdict %q", where, r.Verdict)
	case r.Confidence < 0 || r.Confidence > 1:
		return fmt.Errorf("compliance: %s: confidence out of [0,1]", where)
	case r.Verdict == Uncertain && r.Confidence >= ApprovalThreshold:
		return fmt.Errorf("compliance: %s: uncertain must have confidence < %.2f", where, ApprovalThreshold)
	case r.Verdict == Allow && r.Confidence < ApprovalThreshold:
		return fmt.Errorf("compliance: %s: allow must have confidence >= %.2f", where, ApprovalThreshold)
	case r.Reason == "" || r.Reason != strings.ToUpper(r.Reason) || r.Message == "":
		return fmt.Errorf("compliance: %s: reason code must be UPPER_SNAKE and message set", where)
	}
	return nil
}

var ruleset = sync.OnceValues(func() (*rules, error) {
	var cf categoriesFile
	if err := readJSON("data/categories.json", &cf); err != nil {
		return nil, err
	}
	var df destinationsFile
	if err := readJSON("data/destinations.json", &df); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(cf.RulesetVersion, "compliance-") || cf.RulesetVersion != df.RulesetVersion {
		return nil, fmt.Errorf("compliance: data files disagree on ruleset_version (%q, %q)", cf.RulesetVersion, df.RulesetVersion)
	}
	if len(cf.Sources) == 0 || len(df.Sources) == 0 {
		return nil, fmt.Errorf("compliance: data files must list sources")
	}
	rs := &rules{
		version: cf.RulesetVersion, sources: append(slices.Clone(cf.Sources), df.Sources...),
		eu: map[string]bool{}, categories: map[string]*category{}, byHS: map[string]string{}, byUN: map[string]string{},
		destinations: df.Destinations, regions: df.Regions, origins: df.Origins,
	}
	for _, c := range cf.EUMembers {
		rs.eu[c] = true
	}
	for i := range cf.Categories {
		c := &cf.Categories[i]
		if _, dup := rs.categories[c.ID]; dup || c.Default == nil {
			return nil, fmt.Errorf("compliance: category %q duplicated or without default", c.ID)
		}
		rs.categories[c.ID] = c
		if err := c.Default.validate(c.ID); err != nil {
			return nil, err
		}
		for m, r := range c.Modes {
			if err := r.validate(c.ID + "/" + string(m)); err != nil {
				return nil, err
			}
		}
		for _, d := range c.Destinations {
			if err := d.validate(c.ID + "/" + strings.Join(d.Countries, ",")); err != nil {
				return nil, err
			}
		}
		for _, p := range c.HSPrefixes {
			if prev, dup := rs.byHS[p]; dup {
				return nil, fmt.Errorf("compliance: HS prefix %s in %s and %s", p, prev, c.ID)
			}
			rs.byHS[p] = c.ID
		}
		for _, u := range c.UNNumbers {
			if prev, dup := rs.byUN[u]; dup {
				return nil, fmt.Errorf("compliance: %s in %s and %s", u, prev, c.ID)
			}
			rs.byUN[u] = c.ID
		}
	}
	for cc, r := range df.Destinations {
		if err := r.validate("destination " + cc); err != nil {
			return nil, err
		}
	}
	for cc, r := range df.Origins {
		if err := r.validate("origin " + cc); err != nil {
			return nil, err
		}
	}
	for _, r := range df.Regions {
		if err := r.validate("region " + r.ID); err != nil {
			return nil, err
		}
	}
	return rs, nil
})

// rule picks the rule of a category for a destination and mode: matching
// destination rules (strictest first) replace the mode rule, which
// replaces the default.
func (rs *rules) rule(catID, country string, mode Mode) rule {
	c := rs.categories[catID]
	var best *rule
	for i := range c.Destinations {
		d := &c.Destinations[i]
		if !rs.matchesCountry(d.Countries, country) || (len(d.Modes) > 0 && !slices.Contains(d.Modes, mode)) {
			continue
		}
		if best == nil || d.Verdict.severity() > best.Verdict.severity() {
			best = &d.rule
		}
	}
	if best != nil {
		return *best
	}
	if r, ok := c.Modes[mode]; ok {
		return *r
	}
	return *c.Default
}

func (rs *rules) matchesCountry(list []string, country string) bool {
	for _, c := range list {
		if c == country || (c == "EU" && rs.eu[country]) {
			return true
		}
	}
	return false
}

// destinationReasons returns the sanctions reasons for the destination:
// the country rule and any region rule the region, city or postal code
// matches.
func (rs *rules) destinationReasons(d Destination) []Reason {
	var out []Reason
	if r, ok := rs.destinations[d.Country]; ok {
		out = append(out, Reason{Code: r.Reason, Verdict: r.Verdict, Confidence: r.Confidence, Message: r.Message, Source: r.Source})
	}
	raw := strings.TrimSpace(d.Region)
	region := normName(d.Region)
	city := normName(d.City)
	postal := strings.TrimSpace(d.PostalCode)
	for _, rr := range rs.regions {
		if rr.Country != d.Country || !rr.matches(raw, region, city, postal) {
			continue
		}
		out = append(out, Reason{Code: rr.Reason, Verdict: rr.Verdict, Confidence: rr.Confidence, Message: rr.Message, Source: rr.Source})
	}
	return out
}

// normName lower-cases and collapses spaces and punctuation so that
// "Avtonomna Respublika  Krym" and "avtonomna respublika krym" compare.
func normName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ',' || r == '.' {
			return ' '
		}
		return r
	}, strings.ToLower(s))
	return strings.Join(strings.Fields(s), " ")
}

// matches is true when the region is one of the codes, or the region or
// city contains one of the names as whole words, or the postal code
// starts with one of the prefixes (5-digit Ukrainian codes only).
func (rr *regionRule) matches(rawRegion, region, city, postal string) bool {
	for _, c := range rr.Codes {
		if strings.EqualFold(rawRegion, c) {
			return true
		}
	}
	for _, n := range rr.Names {
		if containsWords(region, n) || containsWords(city, n) {
			return true
		}
	}
	if len(postal) == 5 {
		for _, p := range rr.PostalPrefixes {
			if strings.HasPrefix(postal, p) {
				return true
			}
		}
	}
	return false
}

func containsWords(hay, needle string) bool {
	if hay == "" || needle == "" {
		return false
	}
	return hay == needle || strings.HasPrefix(hay, needle+" ") || strings.HasSuffix(hay, " "+needle) || strings.Contains(hay, " "+needle+" ")
}
