// Package stripefake is a small stand-in for the Stripe API in tests: it
// serves the three endpoints the onboarding tools use, lets a test change
// an account's state between calls, and injects faults (429 with
// Retry-After, 5xx, slow answers). stripe-mock answers with canned
// fixtures and cannot do either.
package stripefake
