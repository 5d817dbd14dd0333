package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/support"
)

// placeholderApprover stands for the staff id in the example payloads. It
// is not a valid staff id on purpose (staff ids are lower case): sent
// unchanged it is refused as malformed, with the fix in the current
// details. No angle brackets: JSON encoding would turn them into \u003c in
// the status query.
const placeholderApprover = "YOUR-STAFF-ID"

// examplePayload is the shortest valid payload of a decision on id, with
// the approver (and a rejection's reason) left to fill in. Short, so the
// Web UI shows it whole on one line (docs/approvals.md#in-the-web-ui).
func examplePayload(id, decision string) json.RawMessage {
	s := fmt.Sprintf(`{"approval_id":%q,"decision":%q,"approver":%q}`, id, decision, placeholderApprover)
	if decision == support.DecisionReject {
		s = fmt.Sprintf(`{"approval_id":%q,"decision":%q,"approver":%q,"reason":"WHY"}`, id, decision, placeholderApprover)
	}
	return json.RawMessage(s)
}

// reject records a refused approval signal in the shared log and, while an
// approval waits, shows it in the current details until the next decision:
// the Web UI answers "Workflow signaled." to every signal, so the details
// are where staff see that theirs was refused and why.
func (a *Approvals) reject(ctx workflow.Context, r RejectedSignal) {
	a.cfg.Log.reject(ctx, r)
	if a.pending == nil {
		return
	}
	last := a.cfg.Log.Rejected[len(a.cfg.Log.Rejected)-1] // r with its time
	a.pending.LastRefusal = &last
	workflow.SetCurrentDetails(ctx, a.details())
}

// instead says what to send instead of a signal refused for reason;
// recovery is the tool's own suggestion, when it made one.
func (a *Approvals) instead(reason, recovery string) string {
	current := ""
	if a.pending != nil {
		current = a.pending.ApprovalID
	}
	switch reason {
	case RejectMalformed:
		return "send one of the payloads below as it stands, with your staff id as approver" +
			" (and a reason to reject); no other fields"
	case RejectStaleApproval, RejectDuplicateApproval:
		if current != "" {
			return "decide the pending approval: approval_id " + current
		}
		return "nothing to decide now; check the status query for a pending approval"
	case RejectNotWaiting:
		return "nothing to decide now; check the status query for a pending approval"
	case RejectUnknownApprover:
		return "use your own staff id (as listed in the staff table) as approver"
	case RejectVerifyFailed:
		return "the staff roster could not be checked; send the same decision again in a minute"
	}
	return recovery
}

// details renders the pending approval for the Web UI's Current Details
// (markdown in UI 2.42): what is decided, the facts, the last refusal, and
// one payload per decision. Each payload is inline code alone in its
// paragraph: the UI drops fenced blocks, and a triple-click on such a line
// selects the JSON only.
func (a *Approvals) details() string {
	p := a.pending
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Waiting for a support-staff decision** (%s): %s\n\n", p.Flow, p.Subject))
	if r := p.LastRefusal; r != nil {
		b.WriteString(fmt.Sprintf("**Last decision refused** (`%s`", r.Reason))
		if r.Approver != "" {
			b.WriteString(fmt.Sprintf(", approver %s", r.Approver))
		}
		b.WriteString(fmt.Sprintf(", at %s): %s.", r.At, strings.TrimSuffix(r.Detail, ".")))
		if r.Instead != "" {
			b.WriteString(fmt.Sprintf(" **Instead:** %s.", strings.TrimSuffix(r.Instead, ".")))
		}
		b.WriteString(" The workflow still waits.\n\n")
	}
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
	b.WriteString(fmt.Sprintf(". Send signal `%s` from the History tab (More Actions → Send a Signal) "+
		"with your staff id for %s. To approve:\n\n`%s`\n\nTo reject (a reason is required):\n\n`%s`\n",
		SignalApproval, placeholderApprover, p.Example, p.ExampleReject))
	return b.String()
}
