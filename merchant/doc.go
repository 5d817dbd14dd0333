// Package merchant reads the platform's merchants table
// (docs/tools.md#onboarding-tools) and serves it as the tool merchant.get_row.
// Only non-PII columns ever leave this package.
package merchant
