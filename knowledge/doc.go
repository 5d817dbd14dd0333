// Package knowledge is the retrieval behind the knowledge.cite tool
// (docs/tools.md#onboarding-tools): a runbook corpus kept in this repository
// (knowledge/corpus/*.md), loaded into PostgreSQL and searched with full text
// and trigram similarity fused by reciprocal rank.
//
// # Corpus format
//
// Each file under corpus/ is one section: a front matter block between two
// "---" lines, then a Markdown body. Front matter lines are "name: value":
//
//	id:      the section id; must equal the file name without ".md"
//	title:   a short title, returned in citations
//	url:     the public Stripe documentation page (and anchor) the section
//	         summarises; https on docs.stripe.com, stripe.com or
//	         support.stripe.com only
//	section: the heading of that page the section comes from
//	keys:    comma-separated requirement keys and terms it covers, e.g.
//	         individual.verification.document, requirements.past_due
//
// The body says what the requirement means and how a merchant satisfies it.
// The corpus version is a content hash over every file (see Corpus.Version);
// it is the ruleset version of every knowledge.cite answer.
package knowledge
