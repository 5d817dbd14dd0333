// Package db owns the application schema: migrations run through goose from
// the SQL files embedded below, numbered by area (00001–00009 evidence and
// audit, 00010–00019 commerce, 00020–00029 onboarding, 00030–00039
// knowledge, 00040–00044 history archive, 00045– codec server access).
package db
