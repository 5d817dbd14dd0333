package client

import (
	"context"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// OnboardingHandle is the handle StartOnboarding returns.
type OnboardingHandle = Handle

// StartOnboarding starts the onboarding of in.MerchantID, or attaches to
// the one already running for that merchant (Attached). One that already
// ended is started again: Stripe can ask for new requirements after an
// account was enabled (the webhook receiver does the same). Empty
// deadline and approval window come from the configuration; an empty
// request envelope gets this backend as a system actor.
func (c *Client) StartOnboarding(ctx context.Context, in onboardingflow.Input) (OnboardingHandle, error) {
	if in.Deadline == 0 {
		in.Deadline = c.defaults.OnboardingDeadline
	}
	if in.ApprovalWindow == 0 {
		in.ApprovalWindow = c.defaults.ApprovalWindow
	}
	if in.Request.UserID == "" {
		in.Request.UserID = in.MerchantID
	}
	if in.Request.Actor.Type == "" {
		in.Request.Actor = toolkit.Actor{Type: toolkit.ActorSystem, ID: "backend"}
	}
	opts, err := onboardingflow.StartOptions(c.taskQueue, in.MerchantID)
	if err != nil {
		return Handle{}, errf(toolkit.InvalidArgument, "%v", err)
	}
	return c.start(withTrace(ctx, in.Request.Trace), opts, onboardingflow.WorkflowName, in)
}

// Returned tells the onboarding the merchant came back from Stripe's
// hosted page (refresh: they landed on refresh_url, the link expired or
// was used), so it reads the account again and hands out a new link if
// needed.
func (c *Client) Returned(ctx context.Context, merchantID string, refresh bool) error {
	return c.signalOnboarding(ctx, merchantID, onboardingflow.SignalReturned, onboardingflow.ReturnedSignal{Refresh: refresh})
}

// AccountUpdated relays a Stripe account.updated event (the webhook
// receiver's job; exposed for backfills and tests). Repeated event ids are
// ignored by the workflow.
func (c *Client) AccountUpdated(ctx context.Context, merchantID, eventID, accountID string) error {
	return c.signalOnboarding(ctx, merchantID, onboardingflow.SignalAccountUpdated,
		onboardingflow.AccountUpdatedSignal{EventID: eventID, AccountID: accountID})
}

// Dashboard asks for a new Express Dashboard login link.
func (c *Client) Dashboard(ctx context.Context, merchantID string) error {
	return c.signalOnboarding(ctx, merchantID, onboardingflow.SignalDashboard, onboardingflow.DashboardSignal{})
}

func (c *Client) signalOnboarding(ctx context.Context, merchantID, name string, payload any) error {
	id, err := onboardingflow.ID(merchantID)
	if err != nil {
		return errf(toolkit.InvalidArgument, "%v", err)
	}
	if err := c.tc.SignalWorkflow(ctx, id, "", name, payload); err != nil {
		return c.closedOrMissing(ctx, err, id, "signal "+name+" to")
	}
	return nil
}

// OnboardingStatus answers the onboarding's status query: state, due
// requirements, cited explanations, links (hashes only), approvals.
func (c *Client) OnboardingStatus(ctx context.Context, merchantID string) (onboardingflow.Status, error) {
	var st onboardingflow.Status
	id, err := onboardingflow.ID(merchantID)
	if err != nil {
		return st, errf(toolkit.InvalidArgument, "%v", err)
	}
	v, err := c.tc.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		return st, c.wrap(err, id, "query status of")
	}
	if err := v.Get(&st); err != nil {
		return st, errf(toolkit.UpstreamError, "status of %s: %v", id, err)
	}
	return st, nil
}

// WaitOnboarding waits for the onboarding to end (following
// continue-as-new) and returns its result; TIMEOUT at the deadline.
func (c *Client) WaitOnboarding(ctx context.Context, merchantID string, deadline time.Time) (onboardingflow.Result, error) {
	var res onboardingflow.Result
	id, err := onboardingflow.ID(merchantID)
	if err != nil {
		return res, errf(toolkit.InvalidArgument, "%v", err)
	}
	err = c.wait(ctx, id, deadline, &res)
	return res, err
}
