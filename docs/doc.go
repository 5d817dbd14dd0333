// Package docs holds cartwright's contract pages (the *.md files beside this
// one; docs/README.md is the index, the top README.md says which page is for
// whom). It has no code: its test checks that every page#section a comment,
// SQL file, script, config or page cites (docs/evidence.md#staged-batches,
// README "Architecture") and every relative link of every markdown page
// names a file and a heading that exist, so a moved or renamed section
// cannot leave comments pointing nowhere.
package docs
