package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/workflows"
)

// examplePayload is the payload staff send to decide id: the decision
// alone, no approver (the codec server writes the signed-in staff id and
// seals it: docs/approvals.md#sealed-decisions), and a rejection's reason
// left to fill in. Short, with a space after each comma so the Web UI can
// wrap it inside the panel (docs/approvals.md#in-the-web-ui).
func examplePayload(id, decision string) json.RawMessage {
	s := fmt.Sprintf(`{"approval_id": %q, "decision": %q}`, id, decision)
	if decision == support.DecisionReject {
		s = fmt.Sprintf(`{"approval_id": %q, "decision": %q, "reason": "WHY"}`, id, decision)
	}
	return json.RawMessage(s)
}

// reject records a refused approval signal in the shared log and, while an
// approval waits, shows it in the current details until the next decision:
// the Web UI answers "Workflow signaled." to every signal, so the details
// are where staff see that theirs was refused and why.
func (a *Gate) reject(ctx workflow.Context, r workflows.RejectedSignal) {
	a.cfg.Log.Reject(ctx, r)
	if a.pending == nil {
		return
	}
	last := a.cfg.Log.Rejected[len(a.cfg.Log.Rejected)-1] // r with its time
	a.pending.LastRefusal = &last
	workflow.SetCurrentDetails(ctx, a.details())
}

// instead says what to send instead of a signal refused for reason;
// recovery is the tool's own suggestion, when it made one.
func (a *Gate) instead(reason, recovery string) string {
	current := ""
	if a.pending != nil {
		current = a.pending.ApprovalID
	}
	switch reason {
	case workflows.RejectMalformed:
		return "sign in at the codec server and send one of the payloads below as it stands" +
			" (with a reason to reject); no other fields, no approver"
	case workflows.RejectStaleApproval, workflows.RejectDuplicateApproval:
		if current != "" {
			return "decide the pending approval: approval_id " + current
		}
		return "nothing to decide now; check the status query for a pending approval"
	case workflows.RejectNotWaiting:
		return "nothing to decide now; check the status query for a pending approval"
	case workflows.RejectUnauthenticated:
		return support.SignInHint
	case workflows.RejectUnknownApprover:
		return "sign in at the codec server with your own staff token and send the decision again"
	case workflows.RejectVerifyFailed:
		return "the staff roster could not be checked; send the same decision again in a minute"
	}
	return recovery
}

// details renders the pending approval for the Web UI's Current Details
// (markdown in UI 2.42): a refused decision first, so it cannot be missed
// (docs/approvals.md#what-staff-see), then what is decided, the facts, and
// one payload per decision. Each payload is inline code alone in its
// paragraph: the UI drops fenced blocks, and a triple-click on such a line
// selects the JSON only.
func (a *Gate) details() string {
	p := a.pending
	var b strings.Builder
	if r := p.LastRefusal; r != nil {
		b.WriteString(fmt.Sprintf("**DECISION REFUSED: %s** (`%s`", refusalHeadline(r.Reason), r.Reason))
		if r.Approver != "" {
			b.WriteString(fmt.Sprintf(", approver %s", r.Approver))
		}
		b.WriteString(fmt.Sprintf(", at %s): %s.", r.At, strings.TrimSuffix(r.Detail, ".")))
		if r.Instead != "" {
			b.WriteString(fmt.Sprintf(" **Instead:** %s.", strings.TrimSuffix(r.Instead, ".")))
		}
		b.WriteString(" Nothing was decided: the workflow still waits.\n\n---\n\n")
	}
	b.WriteString(fmt.Sprintf("**Waiting for a support-staff decision** (%s): %s\n\n", p.Flow, p.Subject))
	if p.Question != "" {
		b.WriteString(p.Question + "\n\n")
	}
	for _, f := range p.Facts {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString(fmt.Sprintf("\nApproval id `%s`, decide before %s", p.ApprovalID, p.ExpiresAt.Format(time.RFC3339)))
	if len(p.AllowedRoles) > 0 {
		b.WriteString(fmt.Sprintf(" (roles: %s)", strings.Join(p.AllowedRoles, ", ")))
	}
	b.WriteString(fmt.Sprintf(". Sign in at the codec server (its /codec/login page), then send signal `%s` "+
		"from the History tab (More Actions → Send a Signal) with a payload below as it stands: do not type your "+
		"staff id, the codec server writes it and seals the decision; an unsealed decision is refused. To approve:\n\n`%s`\n\n"+
		"To reject (a reason is required):\n\n`%s`\n",
		SignalApproval, p.Example, p.ExampleReject))
	return b.String()
}

// refusalHeadline says in a few words why a decision did not count.
func refusalHeadline(reason string) string {
	switch reason {
	case workflows.RejectUnauthenticated:
		return "not signed in, the author is unknown"
	case workflows.RejectApproverForbidden:
		return "this staff member may not decide it"
	case workflows.RejectUnknownApprover:
		return "not a staff member"
	case workflows.RejectMalformed:
		return "the payload is not a decision"
	case workflows.RejectStaleApproval, workflows.RejectDuplicateApproval, workflows.RejectNotWaiting:
		return "not the pending approval"
	}
	return "not recorded"
}
