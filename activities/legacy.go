package activities

import (
	"context"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// The per-tool activities (Commerce.GetQuote, Onboarding.Cite,
// Approval.RecordApproval …) are the tool activities of histories recorded
// before Tools.CallTool became the one tool activity. Workflows no longer
// schedule them (workflow.GetVersion keeps old runs on them), but a worker
// must still serve them while such runs are open, with their old contract:
// a typed result beside the envelope, and a refusal as a failed activity
// (ApplicationError of its code). Each is a shim over the same call; the
// refusal still gets its evidence snapshot.

// LegacyActivity is a tool's per-tool activity: its type name, and the
// field of its result that holds the tool's data (beside "envelope").
type LegacyActivity struct {
	Name        string
	ResultField string
}

// LegacyActivityOf returns tool's per-tool activity, for the workflows'
// versioned call sites; ok is false for a tool that never had one.
func LegacyActivityOf(tool string) (LegacyActivity, bool) {
	la, ok := legacyActivities[tool]
	return la, ok
}

var legacyActivities = map[string]LegacyActivity{
	"pricing.get_realtime_quote":    {"GetQuote", "quote"},
	"shipping.quote_options":        {"QuoteShipping", "shipping"},
	"tax.estimate_duties_and_taxes": {"EstimateDutiesAndTaxes", "duties"},
	"compliance.check_item":         {"CheckCompliance", "verdict"},
	"checkout.compute_total":        {"ComputeTotal", "total"},
	"checkout.create_draft_order":   {"CreateDraftOrder", "draft_order"},
	"merchant.get_row":              {"GetMerchantRow", "row"},
	"stripe.get_account_status":     {"GetAccountStatus", "status"},
	"stripe.create_relink_url":      {"CreateRelinkURL", "link"},
	"stripe.create_login_link":      {"CreateLoginLink", "link"},
	"knowledge.cite":                {"Cite", "cite"},
	"support.record_approval":       {"RecordApproval", "record"},
}

// legacy runs tool for a per-tool activity: its data decoded into T and its
// envelope, or the ApplicationError of a refusal or a failure.
func legacy[T any](ctx context.Context, inv *toolkit.Invoker, tool string, req toolkit.Request, args any) (T, toolkit.Response, error) {
	var out T
	env, err := Call(ctx, inv, tool, req, args)
	if err != nil {
		return out, env, err
	}
	if !env.OK {
		return out, env, ApplicationError(env.Error)
	}
	if err := env.Decode(&out); err != nil {
		return out, env, ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "%v", err))
	}
	return out, env, nil
}
