// Package archtest holds the test that keeps the house in order: which
// folder may import which (README "Architecture"), and that only the
// Temporal-facing packages import the Temporal SDK.
package archtest
