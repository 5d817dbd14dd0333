// Package evidencetest builds the real evidence store for tests in other
// packages: the PostgreSQL store on the test's pool, encrypting raw outputs
// with AES-256-GCM under a fresh random key.
package evidencetest
