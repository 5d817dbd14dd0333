// Package docs holds cartwright's contract pages (the *.md files beside this
// one; docs/README.md is the index). It has no code: its test checks that
// every docs/<page>.md#<section> citation in the repository's code, SQL,
// scripts, Makefile and READMEs names a page and a heading that exist, so a
// renamed section cannot leave comments pointing nowhere.
package docs
