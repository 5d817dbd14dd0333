// Package money is cartwright's exact arithmetic on amounts of money.
//
// Every amount is an int64 in the minor unit of its currency (cents for
// EUR, yen for JPY, fils for KWD). Floats never touch an amount: a total is
// hashed and confirmed by the user, so it must add up to the last unit and
// come out the same on every replay.
//
// Rounding is half-up to the currency's minor unit: a tie rounds away from
// zero (0.5 → 1, -0.5 → -1), the commercial rule tax administrations use
// for VAT per line. The number of decimals of each currency is ISO 4217
// data kept in data/currencies.json, whose ruleset version goes into
// evidence with every answer that depended on it.
package money
