package onboardingflow

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// linkMinRemaining: a relink URL this close to expiry is replaced rather
// than handed out.
const linkMinRemaining = time.Minute

// maxPendingDashboard bounds the login links a burst of dashboard signals
// can make before the workflow gets to them.
const maxPendingDashboard = 3

// request is the envelope of one tool call: a correlation id per call of
// this run, and for a write the idempotency key of its step (see
// onboardingKey), the same in every attempt and every run of the chain.
func (o *onboardingRun) request(ctx workflow.Context, kind, writeStep string) (toolkit.Request, string) {
	o.steps++
	step := fmt.Sprintf("%s-%d", kind, o.steps)
	req := flow.Envelope(ctx, o.base, step)
	req.IdempotencyKey = ""
	if writeStep != "" {
		req.IdempotencyKey = onboardingKey(o.wfID, o.st.ChainID, writeStep)
	}
	return req, step
}

// readMerchant reads the merchant row; a missing merchant or account ends
// the onboarding. A failing database is retried after StatusRetryDelay
// until the deadline.
func (o *onboardingRun) readMerchant(ctx workflow.Context) error {
	for {
		req, step := o.request(ctx, "merchant", "")
		row, env, err := flow.CallTool[merchant.GetRowOutput](ctx, o.specs, flow.Call{
			Tool: merchant.ToolGetRow, Req: req, Args: merchant.GetRowInput{MerchantID: o.st.MerchantID}, Summary: merchant.ToolGetRow,
		}).Get(ctx)
		switch {
		case err == nil:
			o.addEvidence(workflows.EvidenceRefOf(step, env))
			return o.merchantRead(row)
		case ctx.Err() != nil:
			return ctx.Err()
		case !toolkit.CodeOf(err).Retryable():
			o.stepError(ctx, step, err)
			o.finish(StateFailed)
			return nil
		}
		o.stepError(ctx, step, err)
		if o.deadlinePassed(ctx) {
			o.finish(StateDeadlineExceeded)
			return nil
		}
		if err := workflow.Sleep(ctx, o.in.StatusRetryDelay); err != nil {
			return err
		}
	}
}

func (o *onboardingRun) merchantRead(row merchant.GetRowOutput) error {
	st := o.st
	switch {
	case !row.Found:
		o.finish(StateMerchantNotFound)
	case row.StripeAccountID == "":
		st.Merchant = row.StatusSummary
		o.finish(StateNoStripeAccount)
	default:
		st.Merchant, st.StripeAccountID = row.StatusSummary, row.StripeAccountID
		st.NeedRead = true
	}
	return nil
}

// readAccount reads the account status. NOT_FOUND ends the onboarding; any
// other failure (after the activity's own retries) is retried after
// StatusRetryDelay or at the next signal.
func (o *onboardingRun) readAccount(ctx workflow.Context) error {
	st := o.st
	if err := o.setState(ctx, StateReadingAccount); err != nil {
		return err
	}
	args := stripetools.AccountStatusInput{StripeAccountID: st.StripeAccountID}
	if st.ReadFresh {
		zero := 0
		args.MaxAgeSeconds = &zero // something changed: the cache may be stale
	}
	req, step := o.request(ctx, "account", "")
	status, env, err := flow.CallTool[stripetools.AccountStatus](ctx, o.specs, flow.Call{
		Tool: stripetools.ToolAccountStatus, Req: req, Args: args, Summary: stripetools.ToolAccountStatus,
	}).Get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.stepError(ctx, step, err)
		if toolkit.CodeOf(err) == toolkit.NotFound {
			o.finish(StateFailed)
			return nil
		}
		st.RetryReadAt = workflow.Now(ctx).Add(o.in.StatusRetryDelay).UTC()
		return nil
	}
	o.addEvidence(workflows.EvidenceRefOf(step, env))
	st.Account, st.StatusReads = &status, st.StatusReads+1
	st.NeedRead, st.ReadFresh, st.RetryReadAt = false, false, time.Time{}
	return nil
}

// ensureRelink makes sure a usable relink URL is out while the merchant
// has requirements to provide: none yet, the last one used (the merchant
// came back) or about to expire.
func (o *onboardingRun) ensureRelink(ctx workflow.Context) {
	st := o.st
	if st.Account == nil || len(st.Account.Due()) == 0 {
		return
	}
	if l := st.Relink; l != nil && !l.Consumed && l.ExpiresAt.Sub(workflow.Now(ctx)) >= linkMinRemaining {
		return
	}
	// A replaced link must not come back from the tool's burst reuse.
	forceNew := st.Relink != nil
	st.RelinkSeq++
	idem := fmt.Sprintf("relink-%d", st.RelinkSeq)
	req, step := o.request(ctx, "relink", idem)
	link, env, err := flow.CallTool[stripetools.Link](ctx, o.specs, flow.Call{
		Tool: stripetools.ToolRelinkURL, Req: req,
		Args:    stripetools.RelinkInput{StripeAccountID: st.StripeAccountID, ForceNew: forceNew},
		Summary: stripetools.ToolRelinkURL,
	}).Get(ctx)
	if err != nil {
		// The merchant can still use the Express Dashboard (dashboard
		// signal); the next signal tries again with a new step.
		o.stepError(ctx, step, err)
		return
	}
	ref := workflows.EvidenceRefOf(step, env)
	o.addEvidence(ref)
	st.Relink = linkRef(idem, ref, link)
}

// serveDashboard makes one login link per dashboard signal received.
func (o *onboardingRun) serveDashboard(ctx workflow.Context) {
	st := o.st
	for st.PendingDashboard > 0 {
		st.DashboardSeq++
		idem := fmt.Sprintf("dashboard-%d", st.DashboardSeq)
		req, step := o.request(ctx, "dashboard", idem)
		link, env, err := flow.CallTool[stripetools.Link](ctx, o.specs, flow.Call{
			Tool: stripetools.ToolLoginLink, Req: req,
			Args:    stripetools.LoginLinkInput{StripeAccountID: st.StripeAccountID},
			Summary: stripetools.ToolLoginLink,
			Wrap:    o.outlivingFlow(stripetools.ToolLoginLink), // onboarding_outlive.go
		}).Get(ctx)
		st.PendingDashboard-- // pending until answered, an outage included
		if err != nil {
			o.stepError(ctx, step, err)
			continue
		}
		ref := workflows.EvidenceRefOf(step, env)
		o.addEvidence(ref)
		st.Logins = append(st.Logins, *linkRef(idem, ref, link))
		if len(st.Logins) > maxLogins {
			st.Logins = st.Logins[len(st.Logins)-maxLogins:]
		}
	}
}

// linkRef keeps what may be kept of a link: never the URL (the activity
// result only holds "***" anyway), its hash, expiry and snapshot.
func linkRef(step string, ref workflows.EvidenceRef, l stripetools.Link) *LinkRef {
	created, _ := time.Parse(time.RFC3339, l.CreatedAt)
	expires, _ := time.Parse(time.RFC3339, l.ExpiresAt)
	return &LinkRef{Step: step, SnapshotID: ref.SnapshotID, URLSHA256: l.URLSHA256, CreatedAt: created, ExpiresAt: expires, Reused: l.Reused}
}
