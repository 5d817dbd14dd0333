// Package testenv gives integration tests the real stack that `make test`
// starts: a fresh PostgreSQL database per test, the Temporal dev server and
// stripe-mock. A missing service fails the test rather than skipping it, so
// CI can never pass by testing nothing; `go test -short` skips them.
package testenv
