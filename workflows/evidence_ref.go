package workflows

import "github.com/cartwright-dev/cartwright/toolkit"

// EvidenceRef names the evidence snapshot of one tool call of a run.
type EvidenceRef struct {
	// Step is the workflow's name for the call: q1/pricing (quote 1's
	// pricing call), create (the draft-order write).
	Step string `json:"step"`
	Tool string `json:"tool"`
	// SnapshotID is the evidence snapshot (ev_…); empty if none was stored.
	SnapshotID string `json:"snapshot_id"`
	// Hash is the canonical hash of the call's data as the envelope states it.
	Hash string `json:"hash,omitempty"`
}

// EvidenceRefOf reads the snapshot of an envelope.
func EvidenceRefOf(step string, env toolkit.Response) EvidenceRef {
	ref := EvidenceRef{Step: step, Tool: env.Tool, SnapshotID: env.SnapshotID()}
	if env.Evidence != nil && len(env.Evidence.Sources) > 0 {
		ref.Hash = env.Evidence.Sources[0].Hash
	}
	return ref
}
