package onboardingflow

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// maxExplanations bounds the cite calls of one account status: Stripe lists
// a few to a dozen requirements; a pathological list must not flood the
// history.
const maxExplanations = 30

// Kinds of explained items.
const (
	KindPastDue        = "past_due"
	KindCurrentlyDue   = "currently_due"
	KindDisabledReason = "disabled_reason"
)

type dueItem struct{ key, kind, claim string }

// dueItems lists what to explain: past due first, then currently due, then
// the reason the account is disabled, each once.
func (o *onboardingRun) dueItems() []dueItem {
	a := o.st.Account
	var items []dueItem
	seen := map[string]bool{}
	add := func(key, kind, claim string) {
		if !seen[key] && len(items) < maxExplanations {
			seen[key] = true
			items = append(items, dueItem{key, kind, claim})
		}
	}
	for _, k := range a.Requirements.PastDue {
		add(k, KindPastDue, k+" is past due")
	}
	for _, k := range a.Requirements.CurrentlyDue {
		add(k, KindCurrentlyDue, k+" is currently due")
	}
	if r := a.Requirements.DisabledReason; r != "" {
		add("disabled_reason:"+r, KindDisabledReason, "requirements.disabled_reason is "+r)
	}
	return items
}

// explain cites every due item that has no explanation yet (in parallel),
// drops explanations of items no longer due, and queues ungrounded ones for
// support-staff review. A failed cite is retried on the next pass.
func (o *onboardingRun) explain(ctx workflow.Context) error {
	st := o.st
	if st.Account == nil {
		return nil
	}
	items := o.dueItems()
	due := map[string]bool{}
	for _, it := range items {
		due[it.key] = true
	}
	kept := st.Explanations[:0:0]
	have := map[string]bool{}
	for _, e := range st.Explanations {
		if due[e.Requirement] {
			kept = append(kept, e)
			have[e.Requirement] = true
		}
	}
	st.Explanations = kept
	var todo []dueItem
	for _, it := range items {
		if !have[it.key] {
			todo = append(todo, it)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := o.setState(ctx, StateExplaining); err != nil {
		return err
	}
	futures := make([]flow.Future[knowledge.CiteResult], len(todo))
	steps := make([]string, len(todo))
	for i, it := range todo {
		req, step := o.request(ctx, "cite", "")
		steps[i] = step
		futures[i] = flow.CallTool[knowledge.CiteResult](ctx, o.specs, flow.Call{
			Tool: onboarding.ToolCite, Req: req, Args: onboarding.CiteInput{Claim: it.claim, TopK: 3}, Summary: onboarding.ToolCite,
		})
	}
	for i, it := range todo {
		cite, env, err := futures[i].Get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.stepError(ctx, steps[i], err)
			continue
		}
		ref := workflows.EvidenceRefOf(steps[i], env)
		o.addEvidence(ref)
		e := Explanation{
			Requirement: it.key, Kind: it.kind, Claim: it.claim, Grounded: cite.Grounded,
			Citations: cite.Citations, Shown: cite.Grounded, Evidence: ref,
		}
		if !e.Grounded {
			// Too little evidence (docs/approvals.md#when-a-human-decides), so
			// a human decides before the merchant sees it.
			e.Review, e.Recovery = ReviewQueued, onboarding.UngroundedRecovery
		}
		st.Explanations = append(st.Explanations, e)
	}
	return nil
}

// reviewQueued reports whether an ungrounded explanation waits for review.
func (o *onboardingRun) reviewQueued() bool {
	for _, e := range o.st.Explanations {
		if e.Review == ReviewQueued {
			return true
		}
	}
	return false
}

// reviewLoop runs beside the main loop for the whole run: it sends queued
// ungrounded explanations to support staff as one approval request and
// applies the decision, so the merchant's flow never waits for staff.
func (o *onboardingRun) reviewLoop(ctx workflow.Context) {
	for {
		if err := workflow.Await(ctx, func() bool { return o.st.Final || o.reviewQueued() }); err != nil || o.st.Final {
			return
		}
		var keys, facts []string
		for i := range o.st.Explanations {
			e := &o.st.Explanations[i]
			if e.Review != ReviewQueued {
				continue
			}
			e.Review = ReviewPending
			keys = append(keys, e.Requirement)
			facts = append(facts, explanationFact(*e))
		}
		outcome, err := o.approvals.Request(ctx, approval.Request{
			Subject: "onboarding explanation review",
			Question: fmt.Sprintf("The runbook does not clearly ground the explanation of %d Stripe requirement(s) for merchant %s. "+
				"Approve to show the cited explanation to the merchant; reject to withhold it (the merchant is sent to "+
				"Stripe's hosted onboarding or Express Dashboard instead).", len(keys), o.st.MerchantID),
			Facts:        facts,
			AllowedRoles: []string{support.RoleSupport, support.RoleAdmin},
			Interrupt:    func() bool { return o.st.Final },
		})
		if err != nil {
			return
		}
		review := map[string]string{
			support.DecisionApprove: ReviewApproved, support.DecisionReject: ReviewRejected,
			approval.Expired: ReviewExpired, approval.Interrupted: ReviewDropped,
		}[outcome.Decision]
		for i := range o.st.Explanations {
			e := &o.st.Explanations[i]
			if e.Review == ReviewPending && slices.Contains(keys, e.Requirement) {
				e.Review, e.Shown = review, review == ReviewApproved
			}
		}
	}
}

// explanationFact is one line for staff: the requirement and its best
// (too weak) citation; requirement keys and doc titles hold no PII.
func explanationFact(e Explanation) string {
	if len(e.Citations) == 0 {
		return e.Requirement + ": no citation found"
	}
	c := e.Citations[0]
	return fmt.Sprintf("%s: best citation %q (%s), confidence %.2f", e.Requirement, c.Title, c.URL, c.Confidence)
}
