package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// StateMerchantNotReady: the order's merchant cannot take charges yet
// (docs/payments.md#onboarding-gates-selling); nothing was quoted.
const StateMerchantNotReady = "MERCHANT_NOT_READY"

// onboardingIDPrefix starts a merchant's onboarding workflow id.
const onboardingIDPrefix = "onboarding/"

// gateMerchant refuses, before anything is quoted, an order whose
// merchant cannot take charges: no merchant row, no connected account,
// or an account whose charges_enabled is false in the onboarding tools'
// answer. Its recovery is the merchant's onboarding. An order without a
// merchant passes (it only holds stock: docs/stock.md).
func (d *draftOrder) gateMerchant(ctx workflow.Context) (*Result, error) {
	id := d.in.MerchantID
	if id == "" {
		return nil, nil
	}
	row, env, err := flow.CallTool[merchant.GetRowOutput](ctx, d.specs, flow.Call{
		Tool: merchant.ToolGetRow, Req: d.request(ctx, "merchant/row"),
		Args: merchant.GetRowInput{MerchantID: id}, Summary: merchant.ToolGetRow + ": " + id,
	}).Get(ctx)
	d.recordAnswer("merchant/row", env, err)
	if err != nil {
		return d.outcome(err)
	}
	if !row.Found || row.StripeAccountID == "" {
		return d.notReady(id, "the merchant has no connected Stripe account"), nil
	}
	st, env, err := flow.CallTool[stripetools.AccountStatus](ctx, d.specs, flow.Call{
		Tool: stripetools.ToolAccountStatus, Req: d.request(ctx, "merchant/account"),
		Args: stripetools.AccountStatusInput{StripeAccountID: row.StripeAccountID}, Summary: stripetools.ToolAccountStatus,
	}).Get(ctx)
	d.recordAnswer("merchant/account", env, err)
	if err != nil {
		return d.outcome(err)
	}
	if !st.ChargesEnabled {
		return d.notReady(id, "the merchant's Stripe account cannot take charges yet").
			withDetail("requirements_due", st.Due()), nil
	}
	return nil, nil
}

// notReady is the refusal of a merchant that cannot sell yet: FORBIDDEN,
// with its onboarding as the way out.
func (d *draftOrder) notReady(merchantID, why string) *Result {
	res := &Result{State: StateMerchantNotReady, Code: toolkit.Forbidden, Message: why}
	e := toolkit.Errorf(toolkit.Forbidden, "%s", why).WithDetail("state", StateMerchantNotReady).
		WithDetail("merchant_id", merchantID).WithDetail("reason", "charges_disabled").
		WithRecovery(fmt.Sprintf("finish the merchant's Stripe onboarding (starter onboarding start %s: an onboarding link), "+
			"then start the order again with a new idempotency key", merchantID), stripetools.ToolRelinkURL)
	// The merchant's onboarding run (onboardingflow.OnboardingID; a flow
	// does not import another, and the id was checked at the start).
	e.WithDetail("onboarding_workflow_id", onboardingIDPrefix+merchantID)
	res.Error = e
	return res
}
