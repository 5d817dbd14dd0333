// Package faults is the fault matrix (`make test-faults`,
// docs/testing.md#fault-matrix-make-test-faults): a
// stack of its own on free ports — a Temporal dev server on a state file,
// a private PostgreSQL cluster, stripe-mock behind a fault-injecting proxy,
// real worker processes — and scenarios that kill, stop and corrupt parts
// of it while draft orders and onboardings run. It prints one table:
// scenario, orders, completed, failed, duplicate rows, evidence gaps,
// audit findings. Everything lives in the tests; this file only names the
// package.
package faults
