package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Retrieval constants. They are part of the answer: changing one changes
// which citations a claim gets, so tests pin their effect.
const (
	// rrfK is the reciprocal rank fusion constant (Cormack et al.): a
	// section ranked r by one signal contributes 1/(rrfK+r).
	rrfK = 60
	// keyBoostArms is how many first-place votes an exact requirement-key
	// match is worth in the fusion: with two arms, a key-matched section
	// outranks any section that only tops both text signals.
	keyBoostArms = 2.0
	// candidates is how many sections each signal contributes at most
	// (at least top_k×4).
	candidates = 20
	// coveragePrior, times the weight of the rarest word, is added to the
	// claim's total IDF weight before dividing: about half a rare word. It
	// keeps a two-word claim that shares one word with a section ("refund
	// order") from reaching 0.5 coverage, while barely moving long claims.
	coveragePrior = 0.45

	// GroundedThreshold is the confidence the best citation needs for a
	// claim to count as grounded. Confidence (see Cite) is mostly the
	// IDF-weighted share of the claim's words that the section contains, so
	// an off-topic question that shares a word or two with the corpus
	// ("can I get a refund for my order") stays well below it.
	// Calibrated by TestGroundingCalibration over 43 on-topic and 18
	// off-topic claims: on the current corpus the lowest on-topic best
	// confidence is 0.48 and the highest off-topic one 0.38; the threshold
	// sits in the middle of that gap, and the test fails if a corpus edit
	// closes the gap or moves it off the threshold.
	GroundedThreshold = 0.43
	// CitationFloor drops citations below this confidence: they are noise,
	// and an ungrounded answer should not look supported.
	CitationFloor = 0.2

	// DefaultTopK is top_k when the caller gives none
	// (docs/tools.md#onboarding-tools).
	DefaultTopK = 3
	// MaxTopK and the claim bounds mirror schemas/knowledge.cite.input.json.
	MaxTopK       = 10
	MinClaimRunes = 3
	MaxClaimRunes = 500
)

// Errors of Cite. ErrInvalidArgument wraps every input problem (the tool
// maps it to INVALID_ARGUMENT); a database failure is returned wrapped as is
// (the tool maps it to UPSTREAM_ERROR with upstream_code search_error).
var ErrInvalidArgument = errors.New("knowledge: invalid argument")

// Citation is one source backing a claim: only public Stripe documentation
// URLs and repository paths, never an internal address.
type Citation struct {
	Title      string  `json:"title"`
	URL        string  `json:"url"`
	Section    string  `json:"section"`
	Confidence float64 `json:"confidence"`
	// Runbook is the repository path of the runbook section.
	Runbook string `json:"runbook,omitempty"`
}

// CiteResult is what Cite returns; marshalled, it matches
// schemas/knowledge.cite.output.json.
type CiteResult struct {
	Citations []Citation `json:"citations"`
	Grounded  bool       `json:"grounded"`
	// CacheHit goes into the envelope's meta, not into the data.
	CacheHit bool `json:"-"`
	// CorpusVersion is the ruleset version for evidence.
	CorpusVersion string `json:"corpus_version"`
}

func (r CiteResult) clone() CiteResult {
	r.Citations = append([]Citation(nil), r.Citations...)
	if r.Citations == nil {
		r.Citations = []Citation{}
	}
	return r
}

// Option configures Load.
type Option func(*options)

type options struct {
	cacheSize int
	cacheTTL  time.Duration
	now       func() time.Time
	corpus    *Corpus
}

// WithCache sets the answer cache's capacity and time to live; a capacity
// of 0 disables it. Default: 1024 answers for 10 minutes.
func WithCache(capacity int, ttl time.Duration) Option {
	return func(o *options) { o.cacheSize, o.cacheTTL = capacity, ttl }
}

// WithClock replaces time.Now for the cache (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithCorpus loads c instead of the embedded corpus (tests).
func WithCorpus(c *Corpus) Option { return func(o *options) { o.corpus = c } }

// Index answers Cite over one corpus version. It is safe for concurrent use.
type Index struct {
	pool     *pgxpool.Pool
	version  string
	sections map[string]*Section
	// lexemes holds each section's PostgreSQL lexemes; idf their inverse
	// document frequency over the corpus. Both feed the confidence.
	lexemes map[string]map[string]bool
	idf     map[string]float64
	idfMax  float64
	// Key lookups for exact requirement-key matching.
	exact, roleExact, families, roleFamilies map[string][]string
	cache                                    *lru
}

// advisoryLockKey serialises concurrent Loads of a corpus across workers
// ("kbload" in ASCII).
const advisoryLockKey = 0x6b626c6f6164

// Load makes sure the corpus version is in the database (inserting it once,
// in one transaction, if it is not) and returns an Index over it. It is
// idempotent and safe to call from several processes at once.
func Load(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Index, error) {
	o := options{cacheSize: 1024, cacheTTL: 10 * time.Minute, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	c := o.corpus
	if c == nil {
		var err error
		if c, err = Embedded(); err != nil {
			return nil, err
		}
	}
	if err := store(ctx, pool, c); err != nil {
		return nil, err
	}
	ix := &Index{
		pool:         pool,
		version:      c.Version,
		sections:     map[string]*Section{},
		lexemes:      map[string]map[string]bool{},
		idf:          map[string]float64{},
		exact:        map[string][]string{},
		roleExact:    map[string][]string{},
		families:     map[string][]string{},
		roleFamilies: map[string][]string{},
		cache:        newLRU(o.cacheSize, o.cacheTTL, o.now),
	}
	for i := range c.Sections {
		s := &c.Sections[i]
		ix.sections[s.ID] = s
		for _, k := range s.Keys {
			k = strings.ToLower(k)
			if !isKey(k) {
				continue
			}
			ix.exact[k] = appendOnce(ix.exact[k], s.ID)
			ix.roleExact[roleNormal(k)] = appendOnce(ix.roleExact[roleNormal(k)], s.ID)
			if f := family(k); f != "" {
				ix.families[f] = appendOnce(ix.families[f], s.ID)
				ix.roleFamilies[roleNormal(f)] = appendOnce(ix.roleFamilies[roleNormal(f)], s.ID)
			}
		}
	}
	if err := ix.loadLexemes(ctx); err != nil {
		return nil, err
	}
	return ix, nil
}

func appendOnce(list []string, id string) []string {
	for _, v := range list {
		if v == id {
			return list
		}
	}
	return append(list, id)
}

func store(ctx context.Context, pool *pgxpool.Pool, c *Corpus) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("knowledge: load corpus: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit this is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(advisoryLockKey)); err != nil {
		return fmt.Errorf("knowledge: lock corpus: %w", err)
	}
	var present bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM knowledge_corpus WHERE version = $1)`,
		c.Version).Scan(&present); err != nil {
		return fmt.Errorf("knowledge: look up corpus %s: %w", c.Version, err)
	}
	if present {
		return tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO knowledge_corpus (version, section_count) VALUES ($1, $2)`,
		c.Version, len(c.Sections)); err != nil {
		return fmt.Errorf("knowledge: insert corpus %s: %w", c.Version, err)
	}
	rows := make([][]any, 0, len(c.Sections))
	for _, s := range c.Sections {
		head := strings.ToLower(s.Title + " " + s.Section + " " + strings.Join(s.Keys, " "))
		rows = append(rows, []any{c.Version, s.ID, s.Path, s.Title, s.URL, s.Section, s.Keys,
			strings.Join(s.Keys, " "), s.Body, head})
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"knowledge_sections"},
		[]string{"corpus_version", "section_id", "path", "title", "url", "section", "keys",
			"keys_text", "body", "search_head"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("knowledge: insert sections: %w", err)
	}
	return tx.Commit(ctx)
}

func (ix *Index) loadLexemes(ctx context.Context) error {
	rows, err := ix.pool.Query(ctx, `SELECT section_id, tsvector_to_array(tsv)
		FROM knowledge_sections WHERE corpus_version = $1`, ix.version)
	if err != nil {
		return fmt.Errorf("knowledge: read lexemes: %w", err)
	}
	df := map[string]int{}
	for rows.Next() {
		var id string
		var lex []string
		if err := rows.Scan(&id, &lex); err != nil {
			rows.Close()
			return fmt.Errorf("knowledge: read lexemes: %w", err)
		}
		set := make(map[string]bool, len(lex))
		for _, l := range lex {
			set[l] = true
			df[l]++
		}
		ix.lexemes[id] = set
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("knowledge: read lexemes: %w", err)
	}
	if len(ix.lexemes) != len(ix.sections) {
		return fmt.Errorf("knowledge: corpus %s has %d sections in the database, %d in the binary",
			ix.version, len(ix.lexemes), len(ix.sections))
	}
	n := float64(len(ix.lexemes))
	for l, d := range df {
		ix.idf[l] = math.Log((n + 1) / (float64(d) + 0.5))
	}
	// A word the corpus never uses weighs as much as the rarest word it does
	// use: an off-topic word counts fully against coverage, but no more.
	ix.idfMax = math.Log((n + 1) / 1.5)
	return nil
}

// searchSQL ranks the corpus version's sections by two signals in one round
// trip: full text (ts_rank_cd of an OR query, normalised rank/(rank+1)) and
// trigram similarity (word_similarity of the claim against the short head
// of title, section and keys, or against the body, whichever is higher).
// It also returns the claim's own lexemes, parsed with the same english
// configuration, for the coverage part of the confidence.
const searchSQL = `
WITH q AS (
    SELECT websearch_to_tsquery('english', $2) AS tsq
), fts AS (
    SELECT s.section_id, ts_rank_cd(s.tsv, q.tsq, 32) AS score
    FROM knowledge_sections s, q
    WHERE s.corpus_version = $1 AND s.tsv @@ q.tsq
    ORDER BY score DESC, s.section_id
    LIMIT $4
), trg AS (
    SELECT s.section_id,
           greatest(word_similarity($3, s.search_head), word_similarity($3, s.body)) AS score
    FROM knowledge_sections s
    WHERE s.corpus_version = $1
    ORDER BY score DESC, s.section_id
    LIMIT $4
)
SELECT section_id, coalesce(fts.score, 0)::float8, coalesce(trg.score, 0)::float8,
       (SELECT tsvector_to_array(to_tsvector('english', $5)))
FROM fts FULL JOIN trg USING (section_id)`

type candidate struct {
	id                string
	fts, trg          float64
	ftsRank, trgRank  int
	covRank           int
	keyStrength       float64
	fused, confidence float64
	coverage          float64
}

// Cite returns up to topK citations for claim, best first, and whether the
// claim is grounded in the corpus.
//
// Ranking: reciprocal rank fusion (k=60) of the full-text rank and the
// trigram rank, plus keyBoostArms first-place votes (scaled by match
// strength) for a section whose requirement keys the claim names exactly.
//
// Confidence of a section, in [0, 1]: 0.75 × coverage + 0.25 × trigram
// similarity, where coverage is the IDF-weighted share of the claim's
// lexemes (filler words excluded) that the section contains. An exact key
// match lifts confidence to at least 0.5 + 0.45 × strength. The claim is
// grounded when the first citation's confidence reaches GroundedThreshold.
//
// topK 0 means DefaultTopK. Answers are cached by normalised claim and topK.
func (ix *Index) Cite(ctx context.Context, claim string, topK int) (CiteResult, error) {
	if topK == 0 {
		topK = DefaultTopK
	}
	if topK < 1 || topK > MaxTopK {
		return CiteResult{}, fmt.Errorf("%w: top_k %d is outside 1..%d", ErrInvalidArgument, topK, MaxTopK)
	}
	claim = strings.TrimSpace(claim)
	if n := utf8.RuneCountInString(claim); n < MinClaimRunes || n > MaxClaimRunes {
		return CiteResult{}, fmt.Errorf("%w: claim must be %d to %d characters, got %d",
			ErrInvalidArgument, MinClaimRunes, MaxClaimRunes, n)
	}
	if !utf8.ValidString(claim) {
		return CiteResult{}, fmt.Errorf("%w: claim is not valid UTF-8", ErrInvalidArgument)
	}
	// The search itself runs on the normalised claim, so an answer is a
	// function of (corpus version, normalised claim, top_k) alone and a
	// cached answer is exactly what a fresh search would return.
	norm := normalizeClaim(claim)
	key := fmt.Sprintf("%d|%s", topK, norm)
	if r, ok := ix.cache.get(key); ok {
		r.CacheHit = true
		return r, nil
	}
	cands, err := ix.rank(ctx, norm, topK)
	if err != nil {
		return CiteResult{}, err
	}
	res := CiteResult{Citations: []Citation{}, CorpusVersion: ix.version}
	for _, c := range cands {
		if len(res.Citations) == topK {
			break
		}
		if c.confidence < CitationFloor {
			continue
		}
		s := ix.sections[c.id]
		res.Citations = append(res.Citations, Citation{
			Title: s.Title, URL: s.URL, Section: s.Section,
			Confidence: round3(c.confidence), Runbook: s.Path,
		})
	}
	res.Grounded = len(res.Citations) > 0 && res.Citations[0].Confidence >= GroundedThreshold
	ix.cache.put(key, res)
	return res, nil
}

// rank runs the search for a normalised claim and scores every candidate,
// best first.
func (ix *Index) rank(ctx context.Context, claim string, topK int) ([]*candidate, error) {
	limit := max(candidates, topK*4)
	text := strings.Join(words(claim), " ")
	rows, err := ix.pool.Query(ctx, searchSQL, ix.version, orQuery(claim),
		claim, limit, text)
	if err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	byID := map[string]*candidate{}
	var claimLex []string
	for rows.Next() {
		c := &candidate{}
		if err := rows.Scan(&c.id, &c.fts, &c.trg, &claimLex); err != nil {
			rows.Close()
			return nil, fmt.Errorf("knowledge: search: %w", err)
		}
		if _, ok := ix.sections[c.id]; ok {
			byID[c.id] = c
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	// Key matches can name a section neither text signal ranked.
	for id, strength := range ix.keyMatches(claim) {
		c, ok := byID[id]
		if !ok {
			c = &candidate{id: id}
			byID[id] = c
		}
		c.keyStrength = strength
	}
	// The third signal, coverage, is computed here for every section from
	// the lexemes read at Load; its top sections join the candidates.
	// Sums run in a fixed order so that equal scores stay bit-for-bit equal
	// from run to run (ties are then broken by section id).
	weights, total := ix.claimWeights(claimLex)
	cov := make([]*candidate, 0, len(ix.sections))
	for id := range ix.sections {
		var got float64
		for _, w := range weights {
			if ix.lexemes[id][w.lexeme] {
				got += w.weight
			}
		}
		if got == 0 {
			continue
		}
		c, ok := byID[id]
		if !ok {
			c = &candidate{id: id}
		}
		c.coverage = got / (total + coveragePrior*ix.idfMax)
		cov = append(cov, c)
	}
	assignRanks(cov, func(c *candidate) float64 { return c.coverage }, func(c *candidate, r int) { c.covRank = r })
	for _, c := range cov {
		if c.covRank <= limit {
			byID[c.id] = c
		}
	}
	cands := make([]*candidate, 0, len(byID))
	for _, c := range byID {
		cands = append(cands, c)
	}
	assignRanks(cands, func(c *candidate) float64 { return c.fts }, func(c *candidate, r int) { c.ftsRank = r })
	assignRanks(cands, func(c *candidate) float64 { return c.trg }, func(c *candidate, r int) { c.trgRank = r })
	for _, c := range cands {
		if c.covRank > limit {
			c.covRank = 0
		}
		for _, r := range []int{c.ftsRank, c.trgRank, c.covRank} {
			if r > 0 {
				c.fused += 1.0 / float64(rrfK+r)
			}
		}
		c.fused += keyBoostArms * c.keyStrength / float64(rrfK+1)
		c.confidence = 0.75*c.coverage + 0.25*c.trg
		if c.keyStrength >= 0.8 {
			c.confidence = math.Max(c.confidence, 0.5+0.45*c.keyStrength)
		}
		c.confidence = math.Min(1, c.confidence)
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.fused != b.fused {
			return a.fused > b.fused
		}
		if a.confidence != b.confidence {
			return a.confidence > b.confidence
		}
		return a.id < b.id
	})
	return cands, nil
}

// assignRanks gives 1-based ranks by descending score; a zero score gets no
// rank (the signal did not find the section).
func assignRanks(cands []*candidate, score func(*candidate) float64, set func(*candidate, int)) {
	ordered := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		if score(c) > 0 {
			ordered = append(ordered, c)
		}
	}
	sort.Slice(ordered, func(i, j int) bool {
		if si, sj := score(ordered[i]), score(ordered[j]); si != sj {
			return si > sj
		}
		return ordered[i].id < ordered[j].id
	})
	for i, c := range ordered {
		set(c, i+1)
	}
}

type weighted struct {
	lexeme string
	weight float64
}

// claimWeights gives each of the claim's lexemes its IDF weight, in lexeme
// order; filler words weigh nothing.
func (ix *Index) claimWeights(lexemes []string) ([]weighted, float64) {
	sorted := append([]string(nil), lexemes...)
	sort.Strings(sorted)
	var out []weighted
	var total float64
	for i, l := range sorted {
		if fillerStems[l] || (i > 0 && sorted[i-1] == l) {
			continue
		}
		v, ok := ix.idf[l]
		if !ok {
			v = ix.idfMax
		}
		out = append(out, weighted{l, v})
		total += v
	}
	return out, total
}

// keyMatches finds the sections whose requirement keys the claim names, with
// a strength: 1 exact; 0.9 exact once person roles are folded
// (owners.dob.day ~ individual.dob.day); 0.8 the claim names the key's
// family (individual.dob); 0.5 a sibling of the family
// (individual.address.town ~ individual.address.city). A key shared by more
// than two sections (disabled_reason) is generic and counts 0.5 at most.
func (ix *Index) keyMatches(claim string) map[string]float64 {
	out := map[string]float64{}
	add := func(ids []string, strength float64) {
		if len(ids) > 2 {
			strength = math.Min(strength, 0.5)
		}
		for _, id := range ids {
			out[id] = math.Max(out[id], strength)
		}
	}
	for _, k := range claimKeys(claim) {
		add(ix.exact[k], 1)
		add(ix.roleExact[roleNormal(k)], 0.9)
		add(ix.families[k], 0.8)
		add(ix.roleFamilies[roleNormal(k)], 0.8)
		if f := family(k); f != "" {
			add(ix.families[f], 0.5)
			add(ix.roleFamilies[roleNormal(f)], 0.5)
		}
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
