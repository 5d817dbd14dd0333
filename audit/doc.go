// Package audit checks a workflow run the way an auditor would
// (docs/audit.md): it replays the run's history with the registered workflow
// code and the worker's data converter (same code, same decisions), then
// checks every completed tool activity's response envelope against its
// evidence snapshot (same hashes) and the workflow's hash chain. Findings and
// notes are the Kind* and Note* constants; docs/audit.md says what each means.
//
// Histories come from the Temporal server, from a JSON file exported with
// `temporal workflow show --output json`, or — when the server has deleted
// the run after retention — from the history archive (package
// evidence/archive).
package audit
