// Package fxrates reads the European Central Bank's euro foreign exchange
// reference rates as a shop would: the published XML (eurofxref-daily.xml,
// a gesmes envelope of Cube time / currency / rate) fetched from a
// configured URL, checked, and stored per reference date in PostgreSQL
// (docs/operators.md#exchange-rates). Prices read the latest stored day
// through commerce.FeedFX. No Temporal here: the scheduled fetch is a
// workflow (workflows/) running an activity (activities/) over Fetcher and
// PGStore.
package fxrates
