// Package logging builds the process logger: zap, with every line passed
// through a core that masks secrets and redacts PII (toolkit's sanitiser),
// so a careless field cannot leak what must never reach a log.
package logging
