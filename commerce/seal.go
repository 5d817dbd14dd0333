package commerce

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

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
	current string
	keys    map[string][]byte
}

// ParseSealRing reads CARTWRIGHT_QUOTE_SEAL_KEYS (`id:base64key,…`, 32-byte
// keys) and CARTWRIGHT_QUOTE_SEAL_KEY_ID (the key that seals; "" is the
// first). An empty spec derives the one key from the evidence key instead
// (HKDF-SHA256, info "cartwright quote seal v1", id ev-<evidence key id>):
// a deployment that sets no ring still seals.
func ParseSealRing(spec, currentID, evidenceKeyID, evidenceKeyB64 string) (*SealRing, error) {
	r := &SealRing{keys: map[string][]byte{}}
	var order []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, encoded, ok := strings.Cut(item, ":")
		if !ok {
			return nil, errors.New("commerce: a CARTWRIGHT_QUOTE_SEAL_KEYS entry is not id:base64key")
		}
		key, err := decodeSealKey(encoded)
		if err != nil {
			return nil, fmt.Errorf("commerce: quote seal key %q: %w", id, err)
		}
		if err := r.add(id, key); err != nil {
			return nil, err
		}
		order = append(order, id)
	}
	if len(order) == 0 {
		secret, err := decodeSealKey(evidenceKeyB64)
		if err != nil {
			return nil, fmt.Errorf("commerce: derive the quote seal key from the evidence key: %w", err)
		}
		key, err := hkdf.Key(sha256.New, secret, nil, "cartwright quote seal v1", sealKeyLen)
		if err != nil {
			return nil, fmt.Errorf("commerce: derive the quote seal key: %w", err)
		}
		id := "ev-" + evidenceKeyID
		if err := r.add(id, key); err != nil {
			return nil, err
		}
		order = append(order, id)
	}
	if currentID == "" {
		currentID = order[0]
	}
	if _, ok := r.keys[currentID]; !ok {
		return nil, fmt.Errorf("commerce: CARTWRIGHT_QUOTE_SEAL_KEY_ID %q is not among the quote seal keys", currentID)
	}
	r.current = currentID
	return r, nil
}

// NewSealRing builds a ring from raw keys by id; current seals. For tests.
func NewSealRing(current string, keys map[string][]byte) (*SealRing, error) {
	r := &SealRing{keys: map[string][]byte{}}
	for id, k := range keys {
		if err := r.add(id, k); err != nil {
			return nil, err
		}
	}
	if _, ok := r.keys[current]; !ok {
		return nil, fmt.Errorf("commerce: current quote seal key %q is not in the ring", current)
	}
	r.current = current
	return r, nil
}

func (r *SealRing) add(id string, key []byte) error {
	if id == "" || strings.ContainsAny(id, " ,:.") {
		return fmt.Errorf("commerce: quote seal key id %q: must be non-empty without spaces, commas, colons or dots", id)
	}
	if _, dup := r.keys[id]; dup {
		return fmt.Errorf("commerce: quote seal key id %q appears twice", id)
	}
	if len(key) != sealKeyLen {
		return fmt.Errorf("commerce: quote seal key %q has %d bytes, needs %d", id, len(key), sealKeyLen)
	}
	r.keys[id] = key
	return nil
}

// IDs are the ring's key ids, sorted.
func (r *SealRing) IDs() []string {
	ids := make([]string, 0, len(r.keys))
	for id := range r.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func decodeSealKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
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
}

func docOf(workflowID string, t Total, e TotalEvidence) sealDoc {
	return sealDoc{
		Version: sealVersion, WorkflowID: workflowID, QuoteHash: t.QuoteHash, GrandTotal: t.GrandTotal,
		DueOnDelivery: t.DueOnDelivery, ExpiresAt: t.ExpiresAt.UTC(), PricingSnapshotID: e.PricingSnapshotID,
		ComplianceSnapshotID: e.ComplianceSnapshotID, ApprovalSnapshotID: e.ApprovalSnapshotID, IssuedAt: e.IssuedAt.UTC(),
	}
}

func (r *SealRing) mac(keyID string, d sealDoc) ([]byte, error) {
	key, ok := r.keys[keyID]
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
	sum, err := r.mac(r.current, docOf(workflowID, t, e))
	if err != nil {
		return "", err
	}
	return sealVersion + "." + r.current + "." + base64.RawURLEncoding.EncodeToString(sum), nil
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
