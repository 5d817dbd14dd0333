package knowledge

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unicode"
)

func TestEmbeddedCorpus(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sections) < 25 {
		t.Fatalf("corpus has %d sections, want at least 25", len(c.Sections))
	}
	if !strings.HasPrefix(c.Version, "kb-") || len(c.Version) != 19 {
		t.Fatalf("version %q is not kb-<16 hex>", c.Version)
	}
	again, err := ParseFS(corpusFS, "corpus")
	if err != nil || again.Version != c.Version {
		t.Fatalf("version not stable: %q vs %q (%v)", again.Version, c.Version, err)
	}
	keys := map[string]bool{}
	for _, s := range c.Sections {
		if !strings.HasPrefix(s.Path, "knowledge/corpus/") || !strings.HasSuffix(s.Path, ".md") {
			t.Errorf("%s: path %q is not a repository path", s.ID, s.Path)
		}
		for _, k := range s.Keys {
			keys[k] = true
		}
	}
	// The requirement keys and states the onboarding workflow explains must
	// each be covered by some section.
	for _, k := range []string{
		"individual.verification.document", "individual.verification.additional_document",
		"individual.id_number", "individual.ssn_last_4", "individual.dob.day",
		"individual.address.line1", "individual.phone", "individual.email",
		"business_profile.url", "business_profile.mcc", "business_profile.product_description",
		"external_account", "tos_acceptance.date", "tos_acceptance.ip", "company.tax_id",
		"company.verification.document", "representative.first_name", "owners.first_name",
		"directors.first_name", "executives.first_name", "company.owners_provided",
		"requirements.past_due", "requirements.pending_verification", "rejected.fraud",
		"listed", "under_review", "platform_paused", "charges_enabled", "payouts_enabled",
		"login_link", "account_onboarding", "refresh_url", "return_url", "expires_at",
	} {
		if !keys[k] {
			t.Errorf("no section covers %s", k)
		}
	}
}

func TestParseRejectsBadSections(t *testing.T) {
	body := strings.Repeat("A real explanation of the requirement. ", 10)
	good := "---\nid: good\ntitle: T\nurl: https://docs.stripe.com/connect/x#y\nsection: S\nkeys: a.b\n---\n" + body
	if _, err := ParseFS(fstest.MapFS{"c/good.md": {Data: []byte(good)}}, "c"); err != nil {
		t.Fatalf("good section refused: %v", err)
	}
	for name, text := range map[string]string{
		"no front matter": body,
		"internal url":    strings.Replace(good, "https://docs.stripe.com/connect/x#y", "https://wiki.corp.internal/stripe", 1),
		"http url":        strings.Replace(good, "https://docs.stripe.com", "http://docs.stripe.com", 1),
		"query in url":    strings.Replace(good, "#y", "?token=1", 1),
		"id mismatch":     strings.Replace(good, "id: good", "id: other", 1),
		"no keys":         strings.Replace(good, "keys: a.b\n", "", 1),
		"unknown field":   strings.Replace(good, "keys: a.b\n", "keys: a.b\nowner: me\n", 1),
		"short body":      strings.Replace(good, body, "too short", 1),
	} {
		if _, err := ParseFS(fstest.MapFS{"c/good.md": {Data: []byte(text)}}, "c"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestClaimText(t *testing.T) {
	if got := normalizeClaim("  Is  person_1AbC.verification.document DUE?? "); got != "is person.verification.document due" {
		t.Errorf("normalizeClaim = %q", got)
	}
	if got := orQuery(`ssn_last_4 "or" -drop this or that`); got != "ssn or last or 4 or drop or this or that" {
		t.Errorf("orQuery = %q", got)
	}
	got := claimKeys("Person_9xY.dob.day and tos_acceptance.ip are due. e.g. nothing")
	want := []string{"person.dob.day", "tos_acceptance.ip", "e.g"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("claimKeys = %v, want %v", got, want)
	}
	if roleNormal("owners.address.city") != "person.address.city" || family("individual.dob.day") != "individual.dob" || family("tos_acceptance.ip") != "" {
		t.Error("roleNormal/family")
	}
	if isKey("listed") || isKey("bank account") || !isKey("company.owners_provided") {
		t.Error("isKey")
	}
}

func TestLRU(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newLRU(2, time.Minute, func() time.Time { return now })
	r := CiteResult{Citations: []Citation{{Title: "a"}}, CorpusVersion: "kb-0"}
	c.put("a", r)
	c.put("b", r)
	if _, ok := c.get("a"); !ok { // a is now most recent
		t.Fatal("a missing")
	}
	c.put("c", r) // evicts b
	if _, ok := c.get("b"); ok {
		t.Error("b not evicted")
	}
	got, ok := c.get("a")
	if !ok {
		t.Fatal("a evicted")
	}
	got.Citations[0].Title = "changed" // callers cannot change the cache
	if again, _ := c.get("a"); again.Citations[0].Title != "a" {
		t.Error("cached value was mutated through a returned copy")
	}
	now = now.Add(time.Minute)
	if _, ok := c.get("a"); ok {
		t.Error("a not expired after its TTL")
	}
	if c.len() != 1 {
		t.Errorf("len = %d, want 1 (c)", c.len())
	}
	off := newLRU(0, time.Minute, time.Now)
	off.put("x", r)
	if _, ok := off.get("x"); ok {
		t.Error("capacity 0 must disable the cache")
	}
}

// FuzzClaimText: whatever the claim, the OR query holds only words joined by
// " or " (no websearch operator survives), and normalising is idempotent, so
// a cached answer's key is stable.
func FuzzClaimText(f *testing.F) {
	for _, s := range []string{"individual.verification.document", `"a" -b or c`, "person_1x.dob.day?", "  ??  ", "需要上传身份证件", "tos_acceptance.ip; DROP TABLE x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, claim string) {
		q := orQuery(claim)
		for _, term := range strings.Split(q, " or ") {
			if q == "" {
				break
			}
			if term == "" || term == "or" {
				t.Fatalf("orQuery(%q) = %q: empty or operator term", claim, q)
			}
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("orQuery(%q) = %q: %q in a term", claim, q, r)
				}
			}
		}
		n := normalizeClaim(claim)
		if normalizeClaim(n) != n {
			t.Fatalf("normalizeClaim not idempotent: %q -> %q -> %q", claim, n, normalizeClaim(n))
		}
	})
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
