package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// checkActivities checks every envelope a completed activity carries
// against its snapshot; it records which snapshot each names. A quote or
// price step (activities.Tools.Quote, Price) carries one envelope per
// call it made.
func checkActivities(ctx context.Context, d Deps, r reads, ev *events, rep *Report) ([]ActivityCheck, error) {
	checks := []ActivityCheck{}
	var origins originChecks
	defer origins.finish(rep)
	for _, a := range ev.Activities {
		if !a.answered() {
			continue
		}
		f := Finding{ActivityID: a.ID, ActivityType: a.Type, EventID: a.EventID}
		envs, err := a.envelopes(d.DataConverter)
		if err != nil {
			f.Kind, f.Detail = KindUndecodableResult, err.Error()
			rep.find(f)
			continue
		}
		if len(envs) == 0 {
			f.Kind, f.Detail = NoteNoEnvelope, "the result carries no response envelope: not a tool call"
			rep.note(f)
			continue
		}
		for _, e := range envs {
			env, refusal := e.env, e.refusal
			g := f
			g.Tool, g.SnapshotID = env.Tool, env.SnapshotID()
			before := len(rep.Findings)
			c := ActivityCheck{ActivityID: a.ID, ActivityType: a.Type, Local: a.Local, Attempt: a.Attempt,
				EventID: a.EventID, Tool: env.Tool, SnapshotID: env.SnapshotID()}
			if err := checkEnvelope(ctx, r, ev, rep, a, env, refusal, g, &c); err != nil {
				return checks, err
			}
			checkSeal(d, env, g, rep)
			origins.see(env, g, rep)
			c.OK = len(rep.Findings) == before
			checks = append(checks, c)
		}
	}
	return checks, nil
}

// checkEnvelope compares one envelope with its snapshot. A refusal's
// (ok=false) evidence is its error object: that is what is hashed.
func checkEnvelope(ctx context.Context, r reads, ev *events, rep *Report, a *activity, env *toolkit.Response, refusal json.RawMessage, f Finding, c *ActivityCheck) error {
	find := func(kind, format string, args ...any) {
		g := f
		g.Kind, g.Detail = kind, fmt.Sprintf(format, args...)
		rep.find(g)
	}
	data := env.Data
	if !env.OK {
		data = refusal
		c.Refusal = true
		if env.Error != nil {
			c.Code = string(env.Error.Code)
		}
	}
	if len(data) == 0 {
		data = json.RawMessage("null") // what the store hashes for an empty output
	}
	// The snapshot is read first so its canonical output can spare hashing
	// the data again (dataHash); what is found is said in the same order.
	var snap *evidence.SnapshotRecord
	var snapErr error
	if env.SnapshotID() != "" {
		snap, snapErr = r.snapshot(ctx, env.SnapshotID())
	}
	hash, err := dataHash(data, snap)
	if err != nil {
		find(KindHashMismatch, "envelope data is not canonical JSON: %v", err)
		return nil
	}
	c.Hash = hash
	switch {
	case env.Evidence == nil || len(env.Evidence.Sources) == 0:
		find(KindHashMismatch, "the envelope states no source hash")
	case env.Evidence.Sources[0].Hash != hash:
		find(KindHashMismatch, "the envelope states hash %s, its data hashes to %s", env.Evidence.Sources[0].Hash, hash)
	}
	if env.SnapshotID() == "" && c.Refusal {
		find(KindMissingSnapshot, "the refusal (%s) names no evidence snapshot", c.Code)
		return nil
	}
	if env.SnapshotID() == "" {
		find(KindMissingSnapshot, "the envelope names no evidence snapshot")
		return nil
	}
	if errors.Is(snapErr, evidence.ErrNotFound) {
		find(KindMissingSnapshot, "snapshot %s is not in the evidence store", env.SnapshotID())
		return nil
	}
	if snapErr != nil {
		return errf("read snapshot %s: %v", env.SnapshotID(), snapErr)
	}
	adoptIdentity(rep, ev, snap)
	if snap.OutputHash != hash {
		find(KindHashMismatch, "the history's data hashes to %s, the snapshot's output_hash is %s", hash, snap.OutputHash)
	}
	if stored, err := snap.StoredOutputHash(); err != nil || stored != hash {
		find(KindHashMismatch, "the snapshot's stored output hashes to %s, the history's data to %s", stored, hash)
	}
	if p := mismatch(rep, ev, a, env, snap); p != "" {
		find(KindSnapshotMismatch, "%s", p)
	}
	return nil
}

// dataHash is toolkit.CanonicalHash(data). When data is, byte for byte,
// the canonical form of the snapshot's stored output — the usual case: the
// invoker answers with sorted, compact JSON — that form's hash is data's,
// since canonicalising canonical JSON changes nothing (RFC 8785), and data
// is not canonicalised again (docs/performance.md#audit-rate).
func dataHash(data json.RawMessage, snap *evidence.SnapshotRecord) (string, error) {
	if snap != nil {
		if c, err := snap.CanonicalOutput(); err == nil && bytes.Equal(c, data) {
			return toolkit.HashBytes(c), nil
		}
	}
	return toolkit.CanonicalHash(data)
}

// mismatch names the first way the snapshot is not this activity's.
func mismatch(rep *Report, ev *events, a *activity, env *toolkit.Response, s *evidence.SnapshotRecord) string {
	switch {
	case rep.WorkflowID != "" && s.WorkflowID != rep.WorkflowID:
		return fmt.Sprintf("the snapshot belongs to workflow %q", s.WorkflowID)
	case !ev.RunIDs[s.RunID] && s.RunID != rep.RunID:
		return fmt.Sprintf("the snapshot belongs to run %q", s.RunID)
	case s.ActivityID != a.ID:
		return fmt.Sprintf("the snapshot belongs to activity %q", s.ActivityID)
	case s.ActivityType != "" && a.Type != "" && s.ActivityType != a.Type:
		return fmt.Sprintf("the snapshot was taken by activity type %q", s.ActivityType)
	case s.Tool != env.Tool || s.ToolVersion != env.Version:
		return fmt.Sprintf("the snapshot is of %s@%s, the envelope of %s@%s", s.Tool, s.ToolVersion, env.Tool, env.Version)
	}
	return ""
}

// adoptIdentity fills the workflow and run id from the first snapshot when
// the history did not carry them (histories of servers before 1.21).
func adoptIdentity(rep *Report, ev *events, s *evidence.SnapshotRecord) {
	if rep.WorkflowID == "" {
		rep.WorkflowID = s.WorkflowID
	}
	if rep.RunID == "" {
		rep.RunID = s.RunID
	}
}

// resultEnvelope is one envelope of an activity result, and its "error"
// object as the history holds it (a refusal's evidence).
type resultEnvelope struct {
	env     *toolkit.Response
	refusal json.RawMessage
}

// envelopesOf decodes an activity result and returns its envelopes: the
// "envelope" field of a tool activity, or the envelope of each of a quote
// or price step's "calls". None for results that are not objects or hold neither.
func envelopesOf(dc converter.DataConverter, result *commonpb.Payloads) ([]resultEnvelope, error) {
	if len(result.GetPayloads()) == 0 {
		return nil, nil
	}
	type envelopeHolder struct {
		Envelope json.RawMessage `json:"envelope"`
		Calls    []struct {
			Envelope json.RawMessage `json:"envelope"`
		} `json:"calls"`
	}
	// Decoded straight into the holder: one pass over the result, not a
	// copy of it first (docs/performance.md#audit-rate). Only if the
	// converter cannot do that is the result read as the bytes it holds
	// and those decoded, to tell a result that does not decode from one
	// that holds no envelope.
	var holder envelopeHolder
	if dc.FromPayload(result.GetPayloads()[0], &holder) != nil {
		var raw json.RawMessage
		if err := dc.FromPayload(result.GetPayloads()[0], &raw); err != nil {
			return nil, fmt.Errorf("decode result: %w", err)
		}
		holder = envelopeHolder{}
		if json.Unmarshal(raw, &holder) != nil {
			return nil, nil
		}
	}
	var out []resultEnvelope
	add := func(b json.RawMessage) error {
		if len(b) == 0 || string(b) == "null" {
			return nil
		}
		var env toolkit.Response
		if err := json.Unmarshal(b, &env); err != nil {
			return fmt.Errorf("decode envelope: %w", err)
		}
		e := resultEnvelope{env: &env}
		if !env.OK { // only a refusal's evidence is its error object
			var errHolder struct {
				Error json.RawMessage `json:"error"`
			}
			_ = json.Unmarshal(b, &errHolder)
			e.refusal = errHolder.Error
		}
		out = append(out, e)
		return nil
	}
	if err := add(holder.Envelope); err != nil {
		return nil, err
	}
	for _, c := range holder.Calls {
		if err := add(c.Envelope); err != nil {
			return nil, err
		}
	}
	return out, nil
}
