package flowtest

import (
	"context"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
)

// SealedAs is the approval payload approver sends after signing in: sealed
// by the codec server for them (the test ring). A decision the codec server
// would not seal (a rejection without reason …) goes unsealed, naming the
// approver, for the workflow to refuse.
func SealedAs(approver, approvalID, decision, reason string) approval.Signal {
	d := support.Decision{ApprovalID: approvalID, Decision: decision, Reason: reason}
	sealed, err := sealtest.As(approver).SealDecision(context.Background(), d)
	if err != nil {
		return approval.Signal{ApprovalID: approvalID, Decision: decision, Approver: approver, Reason: reason}
	}
	return approval.SignalOf(sealed)
}

// RejectedReasons lists the reasons of the rejected signals in order.
func RejectedReasons(l workflows.SignalLog) []string {
	out := []string{}
	for _, r := range l.Rejected {
		out = append(out, r.Signal+":"+r.Reason)
	}
	return out
}
