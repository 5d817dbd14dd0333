// Package draftordertest runs the DraftOrder workflow end to end on the
// real stack (`make test`): the Temporal dev server, PostgreSQL with the
// catalog and staff migrations, the real tool registry, invoker and
// evidence store, and an in-process worker on a task queue of its own. It
// holds only tests and the benchmark.
package draftordertest
