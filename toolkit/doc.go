// Package toolkit is the tool contract in code: the request and response
// envelopes (docs/envelope.md), the closed set of error codes and their retry
// table (docs/errors.md), ToolSpecs and the registry, and the invoker every
// tool call goes through — preflight, execution under the tool's timeout,
// output validation, sanitising, evidence, envelope (docs/tools.md#pipeline).
// It also holds the canonical JSON hashing evidence and audits compare
// (docs/evidence.md#canonical-json).
package toolkit
