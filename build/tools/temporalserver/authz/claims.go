package authz

import (
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/server/common/authorization"
)

// Identity is who a call comes from, as the claim mapper found it (in
// Claims.Extensions).
type Identity struct {
	// Internode: the services' own certificate (history, matching and
	// Temporal's system worker calling the frontend).
	Internode bool
	// Subject is the token's sub (a service's client id or a staff member).
	Subject string
	// Service is the client id of a client-credentials token (sub and
	// client_id the same); "" for a staff member's token.
	Service string
	// Groups are the staff member's groups (the configured claim).
	Groups []string
}

// MapperConfig says how tokens and certificates are read.
type MapperConfig struct {
	// Issuer is the provider's issuer URL; a token of any other is refused.
	Issuer string
	// GroupsClaim names the claim that carries a staff member's groups.
	GroupsClaim string
	// InternodeCN and InternodeIssuerCN name the internode certificate
	// and its CA: a call with it and no token is Temporal's own.
	InternodeCN, InternodeIssuerCN string
}

// ClaimMapper verifies the bearer token with Temporal's default JWT claim
// mapper (signature on the provider's JWKS, expiry) and then reads the
// issuer, the client id and the groups from the verified token; a call
// without a token is internode when it presents the internode certificate,
// anonymous otherwise (the authorizer refuses it).
type ClaimMapper struct {
	jwt authorization.ClaimMapper
	cfg MapperConfig
}

// NewClaimMapper wraps Temporal's default JWT claim mapper.
func NewClaimMapper(jwtMapper authorization.ClaimMapper, cfg MapperConfig) *ClaimMapper {
	return &ClaimMapper{jwt: jwtMapper, cfg: cfg}
}

var _ authorization.ClaimMapper = (*ClaimMapper)(nil)

// AuthInfoRequired is false: a call with neither token nor certificate is
// mapped too (to no identity), so the authorizer decides every call.
func (m *ClaimMapper) AuthInfoRequired() bool { return false }

// GetClaims maps one call's certificate and token to Claims whose
// Extensions is an *Identity.
func (m *ClaimMapper) GetClaims(ai *authorization.AuthInfo) (*authorization.Claims, error) {
	if ai == nil || ai.AuthToken == "" {
		if ai != nil && m.internode(ai) {
			return &authorization.Claims{Subject: "internode", System: authorization.RoleAdmin,
				Extensions: &Identity{Internode: true, Subject: "internode"}}, nil
		}
		return &authorization.Claims{}, nil
	}
	base, err := m.jwt.GetClaims(ai)
	if err != nil {
		return nil, err
	}
	// Verified by the default mapper; read the claims it does not keep.
	_, raw, _ := strings.Cut(ai.AuthToken, " ")
	var mc jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &mc); err != nil {
		return nil, serviceerror.NewPermissionDenied("malformed token", "")
	}
	if !mc.VerifyIssuer(m.cfg.Issuer, true) {
		return nil, serviceerror.NewPermissionDenied("token of another issuer", "")
	}
	id := &Identity{Subject: base.Subject}
	if cid, _ := mc["client_id"].(string); cid != "" && cid == base.Subject {
		id.Service = cid
	} else {
		groups, err := stringList(mc[m.cfg.GroupsClaim])
		if err != nil {
			return nil, serviceerror.NewPermissionDenied(fmt.Sprintf("claim %s: %v", m.cfg.GroupsClaim, err), "")
		}
		id.Groups = groups
	}
	// Permissions come from cartwright's policy, never from the token's
	// own permissions claim.
	return &authorization.Claims{Subject: base.Subject, Extensions: id}, nil
}

// internode: the peer's verified chain is the internode certificate under
// the internode CA (the TLS layer checked the chain; its root is the CA
// that signed it, whatever names the leaf claims).
func (m *ClaimMapper) internode(ai *authorization.AuthInfo) bool {
	cert := authorization.PeerCert(ai.TLSConnection)
	if cert == nil || m.cfg.InternodeCN == "" {
		return false
	}
	chain := ai.TLSConnection.State.VerifiedChains[0]
	root := chain[len(chain)-1]
	return cert.Subject.CommonName == m.cfg.InternodeCN && root.Subject.CommonName == m.cfg.InternodeIssuerCN
}

func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("not a list of strings")
			}
			out = append(out, s)
		}
		return out, nil
	case string:
		return []string{x}, nil
	}
	return nil, fmt.Errorf("not a list of strings")
}
