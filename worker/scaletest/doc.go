// Package scaletest runs cartwright past one worker process: real worker
// binaries (built from ./worker) sharing one task queue on the dev server
// and PostgreSQL `make test` starts, each restricted to a role, killed with
// SIGKILL while draft orders and onboardings are in flight. It holds only
// tests; `make test` runs a short load, `make test-scale` a longer one.
package scaletest
