package commerce

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/internal/keyring"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// sealVersion prefixes every quote seal (docs/quote-seals.md#the-seal).
const sealVersion = "qs1"

// sealKeyLen is the length of a quote-seal key: HMAC-SHA256's block
// output, 32 bytes.
const sealKeyLen = 32

// SealRing holds the quote-seal keys: the current one seals, every key
// verifies, so a key rotates like the payload keys (the key id is in the
// seal).
type SealRing struct {
	keys *keyring.Ring
}

// quoteSealKeys is the quote-seal ring: 32-byte HMAC keys whose ids hold
// no dot (the seal is dotted: version.key id.mac).
var quoteSealKeys = keyring.Spec{
	Prefix: "commerce", Noun: "quote seal key",
	KeysVar: "CARTWRIGHT_QUOTE_SEAL_KEYS", IDVar: "CARTWRIGHT_QUOTE_SEAL_KEY_ID",
	MinBytes: sealKeyLen, MaxBytes: sealKeyLen, IDForbidden: ".",
	Unset: "no quote can be sealed (the ring is never derived from the evidence key)",
}

// ParseSealRing reads CARTWRIGHT_QUOTE_SEAL_KEYS (`id:base64key,…`, 32-byte
// keys) and CARTWRIGHT_QUOTE_SEAL_KEY_ID (the key that seals; "" is the
// first). The ring is required and never derived from another key: the
// MCP gateway holds the evidence key, and a seal key derived from it would
// let the most exposed process seal any total
// (docs/operators.md#keys-and-grants-per-process).
func ParseSealRing(spec, currentID string) (*SealRing, error) {
	r, err := quoteSealKeys.Parse(spec, currentID)
	if err != nil {
		return nil, err
	}
	return &SealRing{keys: r}, nil
}

// NewSealRing builds a ring from raw keys by id; current seals. For tests.
func NewSealRing(current string, keys map[string][]byte) (*SealRing, error) {
	r, err := quoteSealKeys.New(current, keys)
	if err != nil {
		return nil, err
	}
	return &SealRing{keys: r}, nil
}

// sealDoc is what a seal's MAC covers (docs/quote-seals.md#the-seal): the
// total's priced content by its quote_hash and amounts, the workflow that
// sealed it, and the evidence it rests on.
type sealDoc struct {
	Version              string    `json:"v"`
	WorkflowID           string    `json:"workflow_id"`
	QuoteHash            string    `json:"quote_hash"`
	GrandTotal           Money     `json:"grand_total"`
	DueOnDelivery        Money     `json:"due_on_delivery"`
	ExpiresAt            time.Time `json:"expires_at"`
	PricingSnapshotID    string    `json:"pricing_snapshot_id"`
	ComplianceSnapshotID string    `json:"compliance_snapshot_id"`
	ApprovalSnapshotID   string    `json:"approval_snapshot_id"`
	IssuedAt             time.Time `json:"issued_at"`
	// OriginsSnapshotID and ShipFrom: the origin choice the total ships
	// by, and the warehouse of a total from one (a split's are in its
	// hashed parcels). Empty, and left out of the MAC, for a total that
	// chose no origin, so seals made before origins existed still verify.
	OriginsSnapshotID string `json:"origins_snapshot_id,omitempty"`
	ShipFrom          string `json:"ship_from,omitempty"`
}

func docOf(workflowID string, t Total, e TotalEvidence) sealDoc {
	d := sealDoc{
		Version: sealVersion, WorkflowID: workflowID, QuoteHash: t.QuoteHash, GrandTotal: t.GrandTotal,
		DueOnDelivery: t.DueOnDelivery, ExpiresAt: t.ExpiresAt.UTC(), PricingSnapshotID: e.PricingSnapshotID,
		ComplianceSnapshotID: e.ComplianceSnapshotID, ApprovalSnapshotID: e.ApprovalSnapshotID, IssuedAt: e.IssuedAt.UTC(),
	}
	if e.OriginsSnapshotID != "" {
		d.OriginsSnapshotID, d.ShipFrom = e.OriginsSnapshotID, t.ShipFrom
	}
	return d
}

func (r *SealRing) mac(keyID string, d sealDoc) ([]byte, error) {
	key, ok := r.keys.Key(keyID)
	if !ok {
		return nil, fmt.Errorf("unknown key id %q", keyID)
	}
	msg, err := toolkit.Canonical(d)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil), nil
}

// Seal returns the seal of total t resting on e, made for workflowID.
func (r *SealRing) Seal(workflowID string, t Total, e TotalEvidence) (string, error) {
	keyID := r.keys.CurrentID()
	sum, err := r.mac(keyID, docOf(workflowID, t, e))
	if err != nil {
		return "", err
	}
	return sealVersion + "." + keyID + "." + base64.RawURLEncoding.EncodeToString(sum), nil
}

// errSealInvalid is a seal that does not verify.
var errSealInvalid = errors.New("seal does not verify")

// Verify checks the seal of t's evidence for workflowID: nil, or why not.
func (r *SealRing) Verify(workflowID string, t Total) error {
	e := t.Evidence
	if e == nil || e.Seal == "" {
		return errSealInvalid
	}
	parts := strings.Split(e.Seal, ".")
	if len(parts) != 3 || parts[0] != sealVersion {
		return errSealInvalid
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errSealInvalid
	}
	want, err := r.mac(parts[1], docOf(workflowID, t, *e))
	if err != nil || !hmac.Equal(got, want) {
		return errSealInvalid
	}
	return nil
}
