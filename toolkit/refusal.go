package toolkit

import (
	"context"
	"encoding/json"
	"errors"
)

// A refusal is a tool's answer that the call cannot proceed as asked: a
// closed-set code that no retry changes (COMPLIANCE_BLOCKED, OUT_OF_STOCK,
// ADDRESS_INVALID, INVALID_ARGUMENT, FORBIDDEN …). It is evidenced like a
// success: the snapshot's output is the envelope's error object (sanitised),
// its hash is the hash of that object, and the envelope names the snapshot.
// Retryable codes (UPSTREAM_ERROR, TIMEOUT, RATE_LIMITED, CONFLICT) are not
// answers but failures of the way to one; they leave no snapshot and fail
// the activity attempt so Temporal retries it.

// recordRefusal sanitises the refusal in resp.Error, stores its snapshot
// and names it in the envelope. An error is the evidence store's failure
// (UPSTREAM_ERROR): no evidence, no answer.
func (inv *Invoker) recordRefusal(ctx context.Context, c *toolCall, resp *Response) error {
	spec, rawIn := *c.spec, c.inputJSON()
	raw, err := json.Marshal(resp.Error)
	if err != nil {
		return Errorf(UpstreamError, "encode refusal of %s: %v", spec.Name, err)
	}
	clean, err := sanitizeJSON(raw)
	if err != nil {
		return Errorf(UpstreamError, "sanitise refusal of %s: %v", spec.Name, err)
	}
	var safe Error
	if err := json.Unmarshal(clean.json, &safe); err != nil {
		return Errorf(UpstreamError, "decode refusal of %s: %v", spec.Name, err)
	}
	safe.cause = resp.Error.cause
	resp.Error = &safe
	// The bytes hashed are the bytes the history will hold for "error".
	out, err := json.Marshal(resp.Error)
	if err != nil {
		return Errorf(UpstreamError, "encode refusal of %s: %v", spec.Name, err)
	}
	hash, err := OutputHash(out)
	if err != nil {
		return Errorf(UpstreamError, "hash refusal of %s: %v", spec.Name, err)
	}
	resp.Meta.OutputFingerprint = hash
	resp.Meta.RedactionApplied = clean.Changed
	if rawIn == nil {
		rawIn = json.RawMessage(`{}`) // no input was given
	}
	ev := answerEvidence{inDigest: func() (string, error) { return inputDigest(rawIn) },
		output: out, hash: hash, raw: raw, redacted: clean.Changed}
	if err := inv.record(ctx, c, resp, ev); err != nil {
		var te *Error
		if errors.As(err, &te) && !te.Code.Retryable() {
			return Errorf(UpstreamError, "%s", te.Message)
		}
		return err
	}
	return nil
}
