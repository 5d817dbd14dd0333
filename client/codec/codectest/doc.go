// Package codectest is the payload key ring every test stack shares: the
// in-process workers, the test clients, the starter under test (through
// CARTWRIGHT_PAYLOAD_KEYS) and the audit's replayer must all hold the same
// key, or one would write what the other cannot read.
package codectest
