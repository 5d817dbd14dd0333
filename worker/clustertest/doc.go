// Package clustertest checks `make cluster` (docs/operators.md#a-temporal-cluster-make-cluster):
// Temporal's frontend, history, matching and worker as separate
// processes on PostgreSQL, mTLS on the frontend and between the services
// with plaintext refused, a draft order through them, and the Web UI
// against them. `make test-cluster` runs it against a running cluster;
// without one (CARTWRIGHT_CLUSTER_ENV unset) it skips. Everything lives in
// the tests; this file only names the package.
package clustertest
