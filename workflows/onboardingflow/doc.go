// Package onboardingflow is the Onboarding workflow: a merchant's Stripe
// Connect onboarding, from the merchant row to an enabled account, with
// cited explanations of what Stripe asks for (reviewed by support staff
// when ungrounded), relink URLs and dashboard links. (The onboarding tools
// themselves are package onboarding.)
package onboardingflow
