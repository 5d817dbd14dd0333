package support

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/keyring"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// A sealed decision is the approval payload whose author is the staff
// member who signed in, not a name typed into it
// (docs/approvals.md#sealed-decisions): the codec server writes the
// signed-in staff id into the payload and adds a Seal, an HMAC-SHA256 under
// a server key over everything the decision says. The worker's
// support.record_approval verifies it; the audit verifies it again.

// sealDomain separates these MACs from any other use of the key.
const sealDomain = "cartwright/approval-seal/v1"

// Seal limits: a seal is obtained at the moment of deciding, so an old one
// is a replay or a decision left lying around; a little clock skew between
// the codec server and the worker is tolerated.
const (
	SealMaxAge    = 24 * time.Hour
	SealMaxFuture = 5 * time.Minute
	minSealKey    = 32
)

// Seal authenticates one decision (docs/approvals.md#sealed-decisions).
type Seal struct {
	// KeyID names the seal key that made MAC (rotation: CARTWRIGHT_SEAL_KEYS).
	KeyID string `json:"key_id"`
	// IssuedAt is when the codec server sealed it, RFC 3339 UTC, seconds.
	IssuedAt string `json:"issued_at"`
	// MAC is the hex HMAC-SHA256 over the decision (macOf).
	MAC string `json:"mac"`
	// Groups are the approver's groups as the organisation's OpenID
	// Connect provider signed them into the access token the codec server
	// verified (docs/operators.md#sign-in-on-the-cluster); the MAC covers
	// them, and support.record_approval decides the approver's role from
	// them instead of the staff roster. Empty: a roster member's seal.
	Groups []string `json:"groups,omitempty"`
}

// ReasonSHA256 is the hex SHA-256 of a reason as staff wrote it. The MAC
// covers this digest rather than the text, so a seal can still be checked
// once evidence holds the reason with personal data redacted
// (docs/approvals.md#sealed-decisions).
func ReasonSHA256(reason string) string {
	sum := sha256.Sum256([]byte(reason))
	return hex.EncodeToString(sum[:])
}

// ID names the seal in evidence and logs: "seal_" and 16 hex digits of the
// MAC's SHA-256 (the MAC itself is no secret, but an id is easier to quote).
func (s Seal) ID() string {
	sum := sha256.Sum256([]byte(s.MAC))
	return "seal_" + hex.EncodeToString(sum[:8])
}

// Decision is what a staff member decides before it is sealed.
type Decision struct {
	ApprovalID string `json:"approval_id"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
}

// SealedDecision is the approval payload the workflow receives: the
// decision, the authenticated approver, and the seal over both.
type SealedDecision struct {
	ApprovalID string `json:"approval_id"`
	Decision   string `json:"decision"`
	Approver   string `json:"approver"`
	Reason     string `json:"reason,omitempty"`
	Seal       *Seal  `json:"seal,omitempty"`
}

// DecisionSealer obtains the seal of a decision for the staff member it
// authenticated: the codec server's /codec/seal with a staff token
// (codecserver.SealClient), or a SealRing for one staff id (the codec
// server itself, tests).
type DecisionSealer interface {
	SealDecision(ctx context.Context, d Decision) (SealedDecision, error)
}

// SealRing holds the seal keys: the current one seals, every key verifies,
// so a key can be rotated the way payload keys are (add the new key, make
// it current, drop the old one once no decision sealed under it waits).
type SealRing struct {
	keys *keyring.Ring
	now  func() time.Time
}

// sealKeys is the decision-seal ring: HMAC keys of at least 32 bytes.
var sealKeys = keyring.Spec{
	Prefix: "support", Noun: "seal key",
	KeysVar: "CARTWRIGHT_SEAL_KEYS", IDVar: "CARTWRIGHT_SEAL_KEY_ID",
	MinBytes: minSealKey,
	Unset:    "without it no support-staff decision can be sealed or verified",
}

// SealRingFromConfig is the ring of CARTWRIGHT_SEAL_KEYS and
// CARTWRIGHT_SEAL_KEY_ID.
func SealRingFromConfig(cfg config.Config) (*SealRing, error) {
	return ParseSealRing(cfg.SealKeys, cfg.SealKeyID)
}

// ParseSealRing reads `id:base64key,…` (keys of at least 32 random bytes)
// and the id of the key that seals ("" means the first).
func ParseSealRing(spec, currentID string) (*SealRing, error) {
	r, err := sealKeys.Parse(spec, currentID)
	if err != nil {
		return nil, err
	}
	return &SealRing{keys: r, now: time.Now}, nil
}

// NewSealRing builds a ring from raw keys by id; current names the key that
// seals.
func NewSealRing(current string, keys map[string][]byte) (*SealRing, error) {
	r, err := sealKeys.New(current, keys)
	if err != nil {
		return nil, err
	}
	return &SealRing{keys: r, now: time.Now}, nil
}

// WithClock returns a copy of r that reads the time from now (tests).
func (r *SealRing) WithClock(now func() time.Time) *SealRing {
	c := *r
	c.now = now
	return &c
}

// CurrentID is the id of the key that seals.
func (r *SealRing) CurrentID() string { return r.keys.CurrentID() }

// IDs lists the ring's key ids, sorted.
func (r *SealRing) IDs() []string { return r.keys.IDs() }

// String describes the ring for logs: ids only, never key material.
func (r *SealRing) String() string { return r.keys.String() }

// Seal seals decision d by staffID, who must be the authenticated staff
// member: the caller vouches for that (the codec server after checking
// the credential).
func (r *SealRing) Seal(staffID string, d Decision) (SealedDecision, error) {
	return r.SealWithGroups(staffID, nil, d)
}

// maxSealGroups bounds the groups a seal carries.
const maxSealGroups = 16

// SealWithGroups seals d by staffID whose groups the caller verified (the
// codec server, on the provider's token); nil groups is Seal.
func (r *SealRing) SealWithGroups(staffID string, groups []string, d Decision) (SealedDecision, error) {
	if len(groups) > maxSealGroups {
		return SealedDecision{}, toolkit.Errorf(toolkit.InvalidArgument, "%d groups: at most %d travel in a seal", len(groups), maxSealGroups)
	}
	for _, g := range groups {
		if !StaffIDPattern.MatchString(g) {
			return SealedDecision{}, toolkit.Errorf(toolkit.InvalidArgument, "group %q is not a group name", g)
		}
	}
	if problem := decisionProblem(d); problem != "" {
		return SealedDecision{}, toolkit.Errorf(toolkit.InvalidArgument, "%s", problem)
	}
	if !StaffIDPattern.MatchString(staffID) {
		return SealedDecision{}, toolkit.Errorf(toolkit.Unauthorized, "%q is not a staff id: only a staff member's own credential can seal a decision", staffID)
	}
	s := SealedDecision{ApprovalID: d.ApprovalID, Decision: d.Decision, Approver: staffID, Reason: d.Reason}
	keyID, key := r.keys.Current()
	seal := Seal{KeyID: keyID, IssuedAt: r.now().UTC().Format(time.RFC3339), Groups: groups}
	seal.MAC = macOf(key, s.ApprovalID, s.Decision, ReasonSHA256(s.Reason), s.Approver, seal.IssuedAt, groups)
	s.Seal = &seal
	return s, nil
}

// ForStaff is a DecisionSealer that seals for staffID with r.
func (r *SealRing) ForStaff(staffID string) DecisionSealer { return ringSealer{r, staffID} }

type ringSealer struct {
	ring  *SealRing
	staff string
}

func (s ringSealer) SealDecision(_ context.Context, d Decision) (SealedDecision, error) {
	return s.ring.Seal(s.staff, d)
}

// Reasons a seal does not verify (details.seal_problem of the refusal).
const (
	SealMissing    = "missing"
	SealUnknownKey = "unknown_key"
	SealMismatch   = "mismatch"
	SealExpired    = "expired"
	SealFuture     = "from_the_future"
	SealMalformed  = "malformed"
)

// SealError is a seal that does not verify.
type SealError struct {
	Problem string
	Detail  string
}

func (e *SealError) Error() string { return e.Detail }

// Verify checks that s seals exactly this decision by this approver under
// a key of the ring, and is neither too old nor from the future. It says
// nothing about the approver's role: the roster does that.
func (r *SealRing) Verify(d SealedDecision) error {
	if err := r.VerifyMAC(d); err != nil {
		return err
	}
	at, _ := time.Parse(time.RFC3339, d.Seal.IssuedAt) // VerifyMAC parsed it
	now := r.now()
	switch {
	case at.After(now.Add(SealMaxFuture)):
		return &SealError{SealFuture, fmt.Sprintf("seal %s was issued at %s, in the future", d.Seal.ID(), d.Seal.IssuedAt)}
	case now.Sub(at) > SealMaxAge:
		return &SealError{SealExpired, fmt.Sprintf("seal %s was issued at %s, more than %s ago", d.Seal.ID(), d.Seal.IssuedAt, SealMaxAge)}
	}
	return nil
}

// VerifyMAC checks the MAC alone, at any age.
func (r *SealRing) VerifyMAC(d SealedDecision) error {
	return r.verifyMAC(d.Seal, d.ApprovalID, d.Decision, ReasonSHA256(d.Reason), d.Approver)
}

// VerifyRecord checks the seal a record of support.record_approval keeps,
// at any age: what an audit asks of a decision recorded long ago. The
// reason counts by the digest the record keeps (its text may be redacted).
func (r *SealRing) VerifyRecord(rec ApprovalRecord) error {
	if rec.Seal == nil {
		return &SealError{SealMissing, "the decision is recorded without a seal"}
	}
	s := rec.Seal.Seal
	if err := r.verifyMAC(&s, rec.ApprovalID, rec.Decision, rec.Seal.ReasonSHA256, rec.Approver); err != nil {
		return err
	}
	if rec.Seal.SealID != s.ID() {
		return &SealError{SealMismatch, fmt.Sprintf("the record names seal %s, its mac is seal %s", rec.Seal.SealID, s.ID())}
	}
	return nil
}

func (r *SealRing) verifyMAC(s *Seal, approvalID, decision, reasonSHA256, approver string) error {
	if s == nil {
		return &SealError{SealMissing, "the decision carries no seal"}
	}
	key, ok := r.keys.Key(s.KeyID)
	if !ok {
		return &SealError{SealUnknownKey, fmt.Sprintf("seal %s is under key id %q, which this seal key ring (%s) does not hold",
			s.ID(), s.KeyID, strings.Join(r.IDs(), ", "))}
	}
	if _, err := time.Parse(time.RFC3339, s.IssuedAt); err != nil {
		return &SealError{SealMalformed, fmt.Sprintf("seal issued_at %q is not an RFC 3339 time", s.IssuedAt)}
	}
	got, err := hex.DecodeString(s.MAC)
	if err != nil || len(got) != sha256.Size {
		return &SealError{SealMalformed, "seal mac is not 64 hex digits"}
	}
	want, _ := hex.DecodeString(macOf(key, approvalID, decision, reasonSHA256, approver, s.IssuedAt, s.Groups))
	if !hmac.Equal(got, want) {
		return &SealError{SealMismatch, fmt.Sprintf("seal %s does not seal this decision (another approval, decision, reason or approver, or another key)", s.ID())}
	}
	return nil
}

// macOf is the hex HMAC-SHA256 of the decision's fields as one JSON array
// (unambiguous), the reason by its digest; the groups, when there are any,
// as one more element (a seal without groups is what it always was).
func macOf(key []byte, approvalID, decision, reasonSHA256, approver, issuedAt string, groups []string) string {
	fields := []any{sealDomain, approvalID, decision, reasonSHA256, approver, issuedAt}
	if len(groups) > 0 {
		fields = append(fields, groups)
	}
	msg, _ := json.Marshal(fields)
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// decisionProblem names what is wrong with a decision before it is sealed.
func decisionProblem(d Decision) string {
	var bad []string
	if !ApprovalIDPattern.MatchString(d.ApprovalID) {
		bad = append(bad, "approval_id must be apr_ and 16 hex digits")
	}
	if d.Decision != DecisionApprove && d.Decision != DecisionReject {
		bad = append(bad, `decision must be "approve" or "reject"`)
	}
	if len(d.Reason) > 500 {
		bad = append(bad, "reason must be at most 500 characters")
	}
	if d.Decision == DecisionReject && strings.TrimSpace(d.Reason) == "" {
		bad = append(bad, "a rejection needs a reason")
	}
	return strings.Join(bad, "; ")
}
