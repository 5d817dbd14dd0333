package main

import (
	"context"
	"errors"
	"strings"
	"testing"

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
	jsonOut(t, &nt, "mcp", "token", "create", "--actor", "other-agent", "--tenant", "u_123")
	if nt.Actor.Tenant != "u_123" || nt.Actor.UserID() != "u_123" || nt.Token == "" {
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
