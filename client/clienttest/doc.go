// Package clienttest dials the Temporal dev server `make test` starts, for
// integration tests in any package, with the test stacks' payload codec
// (codectest): what the test workers write is encrypted as in production.
package clienttest
