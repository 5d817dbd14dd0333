// Package history holds what the auditor and the archiving activity share
// about Temporal histories: fetching a whole history from the server, the
// JSON encoding `temporal workflow show --output json` uses (which
// client.HistoryFromJSON reads back), a run's summary, and the sweep that
// copies closed histories into the archive (package evidence/archive).
package history
