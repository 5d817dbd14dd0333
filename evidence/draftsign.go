package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// DraftWorkflowType is the workflow type that writes draft orders
// (workflows.DraftOrderType; evidence sits below workflows and cannot
// import it). A draft row signed for a run of any other type is named.
const DraftWorkflowType = "DraftOrder"

// DraftRowContent is what a draft row's signature covers
// (docs/evidence.md#draft-row-signatures): every column the write sets but
// the status, which later moves (expired, converted, cancelled), and the
// database's recorded_at. The address is covered by its ciphertext's digest.
type DraftRowContent struct {
	DraftOrderID    string          `json:"draft_order_id"`
	UserIDHash      string          `json:"user_id_hash"`
	Tool            string          `json:"tool"`
	IdempotencyKey  string          `json:"idempotency_key"`
	QuoteID         string          `json:"quote_id"`
	QuoteHash       string          `json:"quote_hash"`
	Currency        string          `json:"currency"`
	GrandTotalMinor int64           `json:"grand_total_minor"`
	Total           json.RawMessage `json:"total" hash:"-"`
	ShipToCountry   string          `json:"ship_to_country"`
	ShipToRegion    string          `json:"ship_to_region"`
	ShipToPostal    string          `json:"ship_to_postal"`
	ShipToSealed    []byte          `json:"-"`
	ShipToNonce     []byte          `json:"-"`
	ShipToKeyID     string          `json:"ship_to_key_id"`
	CorrelationID   string          `json:"correlation_id"`
	WorkflowID      string          `json:"workflow_id"`
	RunID           string          `json:"run_id"`
	WorkflowType    string          `json:"workflow_type"`
	CreatedAt       time.Time       `json:"-"`
	ExpiresAt       time.Time       `json:"-"`
	SignerKeyID     string          `json:"signer_key_id"`
}

// hash is the canonical hash of the content: the fields, the total's
// canonical hash, the address ciphertext's digest and the times in the
// microsecond form PostgreSQL stores.
func (c *DraftRowContent) hash() (string, error) {
	view, err := toolkit.HashView(c)
	if err != nil {
		return "", err
	}
	total, err := toolkit.OutputHash(c.Total)
	if err != nil {
		return "", fmt.Errorf("total: %w", err)
	}
	sum := sha256.Sum256(append(append([]byte{}, c.ShipToNonce...), c.ShipToSealed...))
	view["total_hash"] = total
	view["ship_to_digest"] = "sha256:" + hex.EncodeToString(sum[:])
	view["created_at"] = c.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	view["expires_at"] = c.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	return toolkit.CanonicalHash(view)
}

// draftRowMessage is what a draft row's signature signs.
func draftRowMessage(contentHash string) []byte {
	return []byte("cartwright/draft-row/1\x00" + contentHash)
}

// SignDraft sets c's signer key id and returns the signature of its
// content by the current key. Only the worker writes draft rows.
func (s *RowSigner) SignDraft(c *DraftRowContent) (string, error) {
	if s.writer != WriterWorker {
		return "", fmt.Errorf("evidence: only the worker signs draft rows, not the %s", s.writer)
	}
	c.SignerKeyID = s.keyID
	h, err := c.hash()
	if err != nil {
		return "", fmt.Errorf("evidence: draft row content: %w", err)
	}
	return s.sign(draftRowMessage(h)), nil
}

// checkDraft names what is wrong with a draft row's author ("" when
// nothing): recorded after rows began to be signed (recordedAt nil:
// before), it must carry a signature of its content that verifies under a
// worker's key.
func (a authorship) checkDraft(c *DraftRowContent, signature string, recordedAt *time.Time) string {
	if recordedAt == nil || recordedAt.Before(a.since) {
		return ""
	}
	if signature == "" {
		return "no signature, recorded at " + recordedAt.UTC().Format(time.RFC3339Nano) + ", after draft rows began to be signed"
	}
	h, err := c.hash()
	if err != nil {
		return "its content cannot be hashed: " + err.Error()
	}
	writer, why := a.keys.verify(c.SignerKeyID, signature, draftRowMessage(h))
	switch {
	case why != "":
		return why
	case writer != WriterWorker:
		return fmt.Sprintf("signed by the %s's key %q: only the worker writes draft rows", writer, c.SignerKeyID)
	}
	return ""
}
