// Package codec keeps personal data out of Temporal's store: a payload
// codec that encrypts every payload the project's clients and workers
// write (workflow and activity inputs and results, signals, queries, memo,
// user metadata, and failure messages through the failure converter) with
// AES-256-GCM under a key id written into the payload's metadata, and the
// codec server the Temporal Web UI and CLI call to show staff the decoded
// payloads.
//
// package client sets it on every SDK client it builds (SDKOptions), so the
// worker, the starter, the Go client, the audit's replayer and the archive
// all encode and decode alike.
package codec
