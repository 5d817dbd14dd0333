// Package onboarding wires the five onboarding tools
// (docs/tools.md#onboarding-tools) into one registry: merchant.get_row (package
// merchant), the three Stripe tools (package stripetools) and knowledge.cite,
// defined here over the retrieval index of package knowledge.
package onboarding
