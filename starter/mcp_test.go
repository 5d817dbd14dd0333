package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/gateway"
)

// TestMCPTokenCreateAndRevoke: the token printed once resolves to its agent
// with its allow-list; after revoke it no longer does.
func TestMCPTokenCreateAndRevoke(t *testing.T) {
	s := stack(t)
	r := runCLI(t, "", "mcp", "token", "create", "--actor", "shop-agent", "--tools", "pricing.get_realtime_quote,knowledge.cite")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "cwt_") || !strings.Contains(lines[1], "not shown again") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	tokens := gateway.NewTokens(s.Pool)
	a, err := tokens.Lookup(context.Background(), lines[0])
	if err != nil || a.ID != "shop-agent" || !a.Allows("knowledge.cite") || a.Allows("stripe.create_login_link") || a.CallsPerMinute != 120 {
		t.Fatalf("lookup: %+v %v", a, err)
	}
	var stored int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM mcp_tokens WHERE token_hash = $1`, lines[0]).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("the token itself is stored (%d, %v)", stored, err)
	}
	var nt gateway.NewToken
	jsonOut(t, &nt, "mcp", "token", "create", "--actor", "other-agent", "--tenant", "tenant_other")
	if nt.Actor.Tenant != "tenant_other" || nt.Actor.UserID() != "tenant_other" || nt.Token == "" {
		t.Fatalf("json create: %+v", nt)
	}
	if r := runCLI(t, "", "mcp", "token", "revoke", a.TokenID); r.code != 0 {
		t.Fatalf("revoke: %d %s", r.code, r.stderr)
	}
	if _, err := tokens.Lookup(context.Background(), lines[0]); !errors.Is(err, gateway.ErrUnknownToken) {
		t.Fatalf("a revoked token still resolves: %v", err)
	}
	runCLI(t, "", "mcp", "token", "revoke", a.TokenID).oneLineErr(t, "revoke twice", exitCannot, "NOT_FOUND")
	runCLI(t, "", "mcp", "token", "create").oneLineErr(t, "no actor", exitCannot, "--actor")
}

// TestAttackMCPTokenGrantsOnlyWhatAgentsMayCall (docs/mcp.md#tokens):
// token create refuses an allow-list naming an internal step, another
// flow's step, a staff-only tool or a tool this build does not serve, and
// a tenant named like a backend's user id (its agents would act as that
// user); nothing is stored for a refused token.
func TestAttackMCPTokenGrantsOnlyWhatAgentsMayCall(t *testing.T) {
	s := stack(t)
	for _, c := range []struct{ label, flag, value, says string }{
		{"the write", "--tools", "checkout.create_draft_order", "checkout.create_draft_order"},
		{"the total", "--tools", "pricing.get_realtime_quote,checkout.compute_total", "checkout.compute_total"},
		{"the origin choice", "--tools", "shipping.choose_origins", "shipping.choose_origins"},
		{"an approval", "--tools", "support.record_approval", "support.record_approval"},
		{"an unknown tool", "--tools", "memory.store", "memory.store"},
		{"a backend user id as tenant", "--tenant", "u_123", "tenant_"},
		{"an agent-like tenant", "--tenant", "shop-agent", "tenant_"},
	} {
		runCLI(t, "", "mcp", "token", "create", "--actor", "greedy-agent", c.flag, c.value).
			oneLineErr(t, c.label, exitCannot, c.says)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM mcp_tokens WHERE actor_id = 'greedy-agent'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tokens stored for refused creates (%v)", n, err)
	}
	var ok gateway.NewToken
	jsonOut(t, &ok, "mcp", "token", "create", "--actor", "greedy-agent", "--tenant", "tenant_greedy",
		"--tools", "draft_order.start,draft_order.confirm,pricing.get_realtime_quote")
	if ok.Token == "" || len(ok.Actor.Tools) != 3 {
		t.Fatalf("a grantable token: %+v", ok)
	}
}

// TestMCPTokenExpiresAndList: --expires-in ends a token; token list shows
// id, actor, tenant, tools, expiry and last use of each, and never the
// token or its hash (docs/mcp.md#tokens).
func TestMCPTokenExpiresAndList(t *testing.T) {
	s := stack(t)
	var short, long gateway.NewToken
	jsonOut(t, &short, "mcp", "token", "create", "--actor", "brief-agent", "--expires-in", "2s")
	jsonOut(t, &long, "mcp", "token", "create", "--actor", "shop-agent", "--tenant", "tenant_acme", "--tools", "merchant.get_row", "--expires-in", "720h")
	if short.Actor.ExpiresAt == nil || long.Actor.ExpiresAt == nil || time.Until(*long.Actor.ExpiresAt) < 719*time.Hour {
		t.Fatalf("expiry not set: %+v %+v", short.Actor, long.Actor)
	}
	tokens := gateway.NewTokens(s.Pool)
	ctx := context.Background()
	if _, err := tokens.Lookup(ctx, long.Token); err != nil {
		t.Fatal(err)
	}
	// Wait for the short token's end (a deadline, not a fixed sleep).
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := tokens.Lookup(ctx, short.Token)
		if errors.Is(err, gateway.ErrUnknownToken) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token outlived --expires-in 2s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var rows []gateway.TokenInfo
	jsonOut(t, &rows, "mcp", "token", "list", "--all")
	byID := map[string]gateway.TokenInfo{}
	for _, r := range rows {
		byID[r.TokenID] = r
	}
	l, sh := byID[long.Actor.TokenID], byID[short.Actor.TokenID]
	if l.ActorID != "shop-agent" || l.Tenant != "tenant_acme" || len(l.Tools) != 1 || l.ExpiresAt == nil || l.LastUsed == nil || l.State != "live" {
		t.Fatalf("listed %+v", l)
	}
	if sh.State != "expired" {
		t.Fatalf("the expired token is listed as %+v", sh)
	}
	jsonOut(t, &rows, "mcp", "token", "list")
	for _, r := range rows {
		if r.TokenID == short.Actor.TokenID {
			t.Fatal("list without --all shows an expired token")
		}
	}
	r := runCLI(t, "", "mcp", "token", "list", "--all")
	var hash string
	if err := s.Pool.QueryRow(ctx, `SELECT token_hash FROM mcp_tokens WHERE token_id = $1`, long.Actor.TokenID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || !strings.Contains(r.stdout, long.Actor.TokenID) || !strings.Contains(r.stdout, "tenant_acme") ||
		strings.Contains(r.stdout, long.Token) || strings.Contains(r.stdout, hash) || strings.Contains(r.stdout, "cwt_") {
		t.Fatalf("list: exit %d\n%s", r.code, r.stdout)
	}
	runCLI(t, "", "mcp", "token", "create", "--actor", "x-agent", "--expires-in", "-1h").oneLineErr(t, "negative expiry", exitCannot, "--expires-in")
}
