package audit

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Seal findings (docs/approvals.md#sealed-decisions): a recorded decision
// whose seal the audit cannot verify again.
const (
	// KindSealInvalid: a decision recorded by support.record_approval 2.x
	// carries no seal, or one that does not seal what the record says
	// (approval, decision, reason, approver): the record was not made from
	// a decision the codec server sealed.
	KindSealInvalid = "seal_invalid"
	// KindSealUnverifiable: the audit holds no seal key ring, or not the
	// key the seal names (CARTWRIGHT_SEAL_KEYS): nothing is known either way.
	KindSealUnverifiable = "seal_unverifiable"
	// NoteUnsealedDecision: a decision recorded before sealed decisions
	// (support.record_approval 1.x): its approver was typed, not signed in.
	NoteUnsealedDecision = "unsealed_decision"
)

// checkSeal verifies the seal of a recorded support-staff decision again,
// with the audit's own seal key ring.
func checkSeal(d Deps, env *toolkit.Response, f Finding, rep *Report) {
	if env.Tool != support.RecordApprovalTool || !env.OK {
		return
	}
	say := func(kind, detail string) Finding {
		g := f
		g.Kind, g.Detail = kind, detail
		return g
	}
	if strings.HasPrefix(env.Version, "1.") {
		rep.note(say(NoteUnsealedDecision, "recorded by "+env.Tool+"@"+env.Version+", before sealed decisions: the approver was typed"))
		return
	}
	var rec support.ApprovalRecord
	if err := json.Unmarshal(env.Data, &rec); err != nil {
		rep.find(say(KindSealInvalid, "the recorded decision does not decode: "+err.Error()))
		return
	}
	if rec.Seal == nil {
		rep.find(say(KindSealInvalid, "the decision of "+rec.Approver+" on "+rec.ApprovalID+" is recorded without a seal"))
		return
	}
	if d.Seals == nil {
		rep.find(say(KindSealUnverifiable, "seal "+rec.Seal.SealID+" (key "+rec.Seal.KeyID+") cannot be checked: "+
			"this audit has no seal key ring (CARTWRIGHT_SEAL_KEYS)"))
		return
	}
	err := d.Seals.VerifyRecord(rec)
	var se *support.SealError
	switch {
	case err == nil && !env.Meta.RedactionApplied && support.ReasonSHA256(rec.Reason) != rec.Seal.ReasonSHA256:
		rep.find(say(KindSealInvalid, "the decision of "+rec.Approver+" on "+rec.ApprovalID+": the recorded reason is not the one sealed"))
	case err == nil:
	case errors.As(err, &se) && se.Problem == support.SealUnknownKey:
		rep.find(say(KindSealUnverifiable, err.Error()+": add that key to CARTWRIGHT_SEAL_KEYS to check it"))
	default:
		rep.find(say(KindSealInvalid, "the decision of "+rec.Approver+" on "+rec.ApprovalID+": "+err.Error()))
	}
}

// configuredSeals is the seal key ring of this process's configuration,
// nil when none is configured (seals are then reported unverifiable).
func configuredSeals() *support.SealRing {
	cfg, err := config.Load()
	if err != nil {
		return nil
	}
	r, err := support.SealRingFromConfig(cfg)
	if err != nil {
		return nil
	}
	return r
}
