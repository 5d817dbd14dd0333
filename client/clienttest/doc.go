// Package clienttest dials the Temporal dev server `make test` starts, for
// integration tests in any package.
package clienttest
