package codecserver

// Staff signed in with the organisation's OpenID Connect provider
// (docs/operators.md#sign-in-on-the-cluster): the Web UI passes the staff
// member's access token, and the codec server verifies it on the
// provider's JWKS (signature, issuer, expiry) — no second sign-in. The
// token's subject is the staff id, its groups claim the groups a decision
// is sealed with.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/cartwright-dev/cartwright/support"
)

// ProviderTokens verifies the provider's access tokens.
type ProviderTokens struct {
	verifier    *oidc.IDTokenVerifier
	groupsClaim string
}

// NewProviderTokens verifies tokens of issuer on the keys at jwksURL
// (fetched when a token names a key not yet seen); groupsClaim names the
// claim holding the staff member's groups.
func NewProviderTokens(ctx context.Context, issuer, jwksURL, groupsClaim string) *ProviderTokens {
	keys := oidc.NewRemoteKeySet(ctx, jwksURL)
	// An access token has no fixed audience to check here; issuer,
	// signature and expiry are.
	v := oidc.NewVerifier(issuer, keys, &oidc.Config{SkipClientIDCheck: true})
	return &ProviderTokens{verifier: v, groupsClaim: groupsClaim}
}

// isJWT: three dot-separated parts (a cartwright staff token is not).
func isJWT(token string) bool { return strings.Count(token, ".") == 2 }

// staffGroups are the groups that make a token a staff member's.
var staffGroups = []string{support.RoleSupport, support.RoleCompliance, support.RoleAdmin}

// Verify returns the staff id and groups of a staff member's token;
// ErrBadCredential for any token that does not verify, a service's
// (client-credentials) token, or a member of no staff group.
func (p *ProviderTokens) Verify(ctx context.Context, raw string) (string, []string, error) {
	tok, err := p.verifier.Verify(ctx, raw)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrBadCredential, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return "", nil, ErrBadCredential
	}
	if cid, _ := claims["client_id"].(string); cid == tok.Subject {
		return "", nil, fmt.Errorf("%w: a service's token", ErrBadCredential)
	}
	var groups []string
	list, _ := claims[p.groupsClaim].([]any)
	for _, g := range list {
		if s, ok := g.(string); ok && support.StaffIDPattern.MatchString(s) {
			groups = append(groups, s)
		}
	}
	if !support.StaffIDPattern.MatchString(tok.Subject) ||
		!slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(staffGroups, g) }) {
		return "", nil, fmt.Errorf("%w: not a staff member", ErrBadCredential)
	}
	return tok.Subject, groups, nil
}
