package gateway

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// ErrNotGrantable refuses a token whose allow-list names a tool an agent
// can never call (docs/mcp.md#tokens).
var ErrNotGrantable = errors.New("tool not grantable to an agent")

// ErrTenantName refuses a tenant outside the tenants' own namespace
// (docs/mcp.md#tenants).
var ErrTenantName = errors.New("not a tenant name")

// tenantPattern is a tenant's name: "tenant_" and up to 57 of A-Z a-z 0-9
// _ -, within the mcp_tokens and merchants CHECK (migrations 00050, 00111).
// The prefix keeps tenants apart from the user ids backends send
// (workflows.CheckUserID): a tenant is its agents' user_id, so a tenant
// named like a backend's user would reach that user's draft orders and
// tool calls by their ids.
var tenantPattern = regexp.MustCompile(`^tenant_[A-Za-z0-9][A-Za-z0-9_-]{0,56}$`)

// checkTenant refuses a tenant that is not a tenant's name ("" is none).
func checkTenant(tenant string) error {
	if tenant == "" || tenantPattern.MatchString(tenant) {
		return nil
	}
	return fmt.Errorf("%w: %q; a tenant is named tenant_… (e.g. tenant_acme), never a backend's user id", ErrTenantName, tenant)
}

// grantable is every tool an agent token may name: the draft order's
// tools and each built-in tool an agent may call — not an internal tool
// or another flow's step (docs/quote-seals.md#who-may-call-a-step), not
// one whose spec leaves agents out (support.record_approval: approvals
// stay with staff).
var grantable = func() map[string]bool {
	m := map[string]bool{ToolDraftStart: true, ToolDraftStatus: true, ToolDraftConfirm: true, ToolDraftCancel: true}
	owners := registry.StepOwners()
	for _, list := range [][]toolkit.Spec{commerce.Specs(), support.Specs(), onboarding.Specs()} {
		for _, s := range list {
			agents := len(s.AllowedActors) == 0 || slices.Contains(s.AllowedActors, toolkit.ActorAgent)
			m[s.Name] = agents && !s.Internal && owners[s.Name] == nil
		}
	}
	return m
}()

// checkGrant refuses an allow-list naming a tool no agent may call, or
// one this build does not serve.
func checkGrant(tools []string) error {
	var bad []string
	for _, tool := range tools {
		if !grantable[tool] {
			bad = append(bad, tool)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (internal steps, staff-only and unknown tools cannot be granted; "+
		"an agent orders with draft_order.*)", ErrNotGrantable, strings.Join(bad, ", "))
}
