package stripetools

import (
	"context"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// checkScope keeps a tenant's call to its own connected accounts
// (docs/mcp.md#tenants). The refusal is the tool's answer (FORBIDDEN), so
// the invoker keeps its evidence like any refusal.
func (c *Client) checkScope(ctx context.Context, call *toolkit.Call, accountID string) error {
	tenant := call.Request.Tenant
	if tenant == "" {
		return nil
	}
	if c.cfg.AccountScope == nil {
		return toolkit.Errorf(toolkit.Forbidden, "%s: no tenant scope is configured, so a tenant's call is refused", call.Spec.Name)
	}
	return c.cfg.AccountScope(ctx, tenant, accountID)
}
