// Package body reads request bodies (order files, stdin, HTTP bodies) with
// the tool contract's size bound, so a huge body is refused before it is
// read into memory.
package body
