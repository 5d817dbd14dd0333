// Package activities holds the Temporal activities. Every activity that
// calls a tool goes through the one toolkit.Invoker (docs/tools.md#pipeline),
// so each call is validated, sanitised and leaves an evidence snapshot; its
// result carries the response envelope under the field "envelope", where an
// auditor finds it (docs/audit.md#evidence-checks).
package activities
