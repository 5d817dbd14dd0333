package authz

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"

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
//
// A token it verified is not verified again for VerifiedFor (never past
// its expiry): a worker sends the same token with each of its many calls,
// and checking the provider's RSA signature on every one is most of what
// authorization costs (docs/performance.md#authorization-on-the-cluster).
type ClaimMapper struct {
	jwt authorization.ClaimMapper
	cfg MapperConfig
	now func() time.Time

	mu       sync.Mutex
	verified map[[32]byte]verifiedToken
}

// verifiedToken is what a token was mapped to and until when that holds.
type verifiedToken struct {
	claims authorization.Claims
	until  time.Time
}

// VerifiedFor is how long a verified token's claims are reused: the
// interval at which the frontend reloads the provider's keys
// (jwtKeyProvider.refreshInterval in scripts/cluster-lib.sh), so a key
// the provider withdraws stops being honoured about as soon as without it.
const VerifiedFor = time.Minute

// maxVerified bounds the reuse table; past it, it starts over.
const maxVerified = 10000

// NewClaimMapper wraps Temporal's default JWT claim mapper.
func NewClaimMapper(jwtMapper authorization.ClaimMapper, cfg MapperConfig) *ClaimMapper {
	return &ClaimMapper{jwt: jwtMapper, cfg: cfg, now: time.Now, verified: map[[32]byte]verifiedToken{}}
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
	// The table is keyed by the token's hash: it holds no bearer token.
	sum := sha256.Sum256([]byte(ai.AuthToken))
	now := m.now()
	m.mu.Lock()
	v, ok := m.verified[sum]
	m.mu.Unlock()
	if ok && now.Before(v.until) {
		c := v.claims
		return &c, nil
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
	claims, err := m.identity(base, mc)
	if err != nil {
		return nil, err
	}
	until := now.Add(VerifiedFor)
	if exp, ok := mc["exp"].(float64); ok && time.Unix(int64(exp), 0).Before(until) {
		until = time.Unix(int64(exp), 0)
	}
	m.mu.Lock()
	if len(m.verified) >= maxVerified {
		m.verified = map[[32]byte]verifiedToken{}
	}
	m.verified[sum] = verifiedToken{claims: *claims, until: until}
	m.mu.Unlock()
	return claims, nil
}

// identity reads the issuer, the client id and the groups of a token the
// default mapper verified (base) from its claims (mc).
func (m *ClaimMapper) identity(base *authorization.Claims, mc jwt.MapClaims) (*authorization.Claims, error) {
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
