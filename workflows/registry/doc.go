// Package registry lists every workflow a cartwright worker serves under
// its registered name, so the worker and the auditor's replayer register
// exactly the same functions.
package registry
