// Package address validates postal addresses before any tool uses them:
// required fields, the country's postal-code format, and the state or
// province where the country's tax or carriers need one (US, CA, AU).
//
// Validate returns field-level problems (the errors among them are what a
// tool maps to ADDRESS_INVALID). Resolve
// normalises, derives a missing region from the postal code when exactly
// one region matches, and validates. Where the region decides the tax (US,
// CA) a region the postal code contradicts is an error on both fields;
// elsewhere (AU) a warning (commerce/rules/README.md, "Region and postal
// code"). Messages
// never repeat the address's text (addresses are PII and problems get
// logged); they name the field and the expected format.
//
// The rules are data (data/countries.json, with its ruleset version and
// public sources), compiled into the binary.
package address
