// Package ulid makes the ULID-like ids of evidence snapshots, quotes and
// draft orders: 26 Crockford base-32 characters of 48 bits of milliseconds
// then 80 random bits, so ids sort by creation time and are unguessable.
package ulid
