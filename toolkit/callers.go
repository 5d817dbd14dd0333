package toolkit

import (
	"slices"
	"strings"
)

// Callers says which workflow runs may call which tools
// (docs/quote-seals.md#who-may-call-a-step): only runs of a workflow type
// the worker registers call any tool, and a step of a flow (a tool with
// owners) only from runs of the types that own it. The worker's wiring
// builds it from the workflow registry; the tool activity asks it before
// the invoker runs anything, with the workflow type Temporal tells the
// activity (not anything the caller sends).
type Callers struct {
	flows  map[string]bool
	owners map[string][]string
}

// NewCallers is the policy of a worker that registers the workflow types
// flows, with owners naming, for each tool that is a step of a flow, the
// workflow types whose runs may call it.
func NewCallers(flows []string, owners map[string][]string) *Callers {
	c := &Callers{flows: make(map[string]bool, len(flows)), owners: make(map[string][]string, len(owners))}
	for _, f := range flows {
		c.flows[f] = true
	}
	for tool, o := range owners {
		c.owners[tool] = slices.Sorted(slices.Values(o))
	}
	return c
}

// Refusal is why a run of workflowType may not call spec's tool, nil when
// it may: FORBIDDEN with details.reason workflow_unregistered for a type
// this worker does not register (a worker of someone else's scheduling on
// our task queue), internal_tool for a step the type does not own, or an
// internal tool nobody owns.
func (c *Callers) Refusal(workflowType string, spec Spec) *Error {
	if !c.flows[workflowType] {
		return Errorf(Forbidden, "%s may be called only from a workflow this service runs; workflow type %q is not one",
			spec.Name, workflowType).
			WithDetail("reason", "workflow_unregistered").WithDetail("tool", spec.Name).WithDetail("workflow_type", workflowType).
			WithRecovery("call tools through cartwright's own workflows (the Go client, the starter CLI or the MCP gateway)")
	}
	owners, owned := c.owners[spec.Name]
	if !owned && !spec.Internal {
		return nil
	}
	if slices.Contains(owners, workflowType) {
		return nil
	}
	return StepError(spec.Name, owners)
}

// StepError is the refusal of a step of a flow called from outside the
// flows that own it (docs/quote-seals.md#internal-tools).
func StepError(tool string, owners []string) *Error {
	flows := strings.Join(owners, ", ")
	if flows == "" {
		flows = "no"
	}
	return Errorf(Forbidden, "%s is an internal step of the %s workflow and cannot be called directly", tool, flows).
		WithDetail("reason", "internal_tool").WithDetail("tool", tool).WithDetail("owners", slices.Clone(owners)).
		WithRecovery("start the workflow that owns it (for a draft order: draft_order.start) and let it make the call")
}
