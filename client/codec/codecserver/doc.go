// Package codecserver is the codec server the Temporal Web UI and CLI call
// (POST …/encode and …/decode, Temporal's remote codec protocol) to show
// staff decrypted payloads. It answers only staff: a bearer token (CLI:
// `--codec-auth 'Bearer cwst_…'`) or the same token in a cookie set by its
// /codec/login page (the Web UI, with "include cross-origin credentials"),
// and it writes every decode to evidence_access_log before it answers.
package codecserver
