// Package webhook receives Stripe webhook events for the onboarding flow.
// It verifies the Stripe-Signature header over the raw body (stripe-go's
// webhook package: timestamp tolerance, either side of now, several secrets while one is being
// rotated), bounds the body, deduplicates by event id in PostgreSQL, and for
// account.updated signals-with-start the merchant's Onboarding workflow.
// Everything it refuses is a clear 4xx and starts nothing.
package webhook
