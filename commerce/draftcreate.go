package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/evidence"
)

// CreateOutcome says what DraftStore.Create did.
type CreateOutcome string

// Create's outcomes.
const (
	// CreateInserted: the draft is new; the audit is closed success.
	CreateInserted CreateOutcome = "inserted"
	// CreateReplayed: the scope already held a draft for the same quote
	// hash (a repeat, or a concurrent call that won); the audit is closed
	// success with replayed=true and Draft is the stored draft.
	CreateReplayed CreateOutcome = "replayed"
	// CreateConflict: the scope holds a draft for another quote hash;
	// nothing was written and Draft is the stored draft.
	CreateConflict CreateOutcome = "conflict"
	// CreateRefused: the correlation id's audit row is failed or another
	// tool's (Audit names it); nothing was written.
	CreateRefused CreateOutcome = "refused"
	// CreateOutOfStock: a line is short of stock in the warehouse that
	// ships it (Short names them); nothing was written.
	CreateOutOfStock CreateOutcome = "out_of_stock"
)

// Reservation is stock a draft order takes: quantity units of sku in a
// warehouse.
type Reservation struct {
	SKU       string `json:"sku"`
	Warehouse string `json:"warehouse"`
	Quantity  int    `json:"quantity"`
}

// ShortLine is a line the write found short of stock.
type ShortLine struct {
	SKU       string `json:"sku"`
	Warehouse string `json:"warehouse"`
	Requested int    `json:"requested"`
	Available int    `json:"available"`
}

// Reservations is the stock a total takes: each line in the warehouse
// that ships it (a split total's parcels, else the total's one warehouse,
// DE when it names none).
func Reservations(t Total) []Reservation {
	var out []Reservation
	if len(t.Parcels) > 0 {
		for _, p := range t.Parcels {
			for _, it := range p.Items {
				out = append(out, Reservation{SKU: it.SKU, Warehouse: p.ShipFrom, Quantity: it.Quantity})
			}
		}
		return out
	}
	w := t.ShipFrom
	if w == "" {
		w = DefaultWarehouse
	}
	for _, l := range t.Lines {
		out = append(out, Reservation{SKU: l.SKU, Warehouse: w, Quantity: l.Quantity})
	}
	return out
}

// Created is what DraftStore.Create reports.
type Created struct {
	Outcome CreateOutcome
	// Draft is the draft that holds the scope (zero when refused).
	Draft StoredDraft
	// Audit is the correlation id's two-phase row after the write.
	Audit evidence.AtomicResult
	// Short are the lines short of stock (CreateOutOfStock).
	Short []ShortLine
}

// Create implements DraftStore with the database function
// draft_order_create (migrations 00090, 00150: it also takes the draft's
// stock, Reservations(d.Total), in the same transaction): the audit row and the draft in one
// statement, so one round trip and one transaction where the two-phase
// audit used to take four (docs/evidence.md#one-transaction). A refused
// constraint (bad data) is a PermanentError; anything else, including the
// serialization failure the function raises when it loses a race to another
// attempt of the same call, is transient and rolled back whole.
func (s PGDrafts) Create(ctx context.Context, d NewDraft, a evidence.TwoPhaseRow) (Created, error) {
	total, err := json.Marshal(d.Total)
	if err != nil {
		return Created{}, fmt.Errorf("draft orders: encode total: %w", err)
	}
	reservations, err := json.Marshal(Reservations(d.Total))
	if err != nil {
		return Created{}, fmt.Errorf("draft orders: encode reservations: %w", err)
	}
	signature, signerKeyID, err := s.sign(d, total)
	if err != nil {
		return Created{}, err
	}
	var c Created
	var short []byte
	var outcome, auditStatus string
	var expires *time.Time // NULL when refused
	err = s.Pool.QueryRow(ctx, `SELECT r_outcome, r_audit_id, r_audit_status, r_audit_tool, r_audit_closed,
			r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at, r_short
		FROM draft_order_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
			$19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35)`,
		a.CorrelationID, a.Tool, a.UserIDHash, a.ActorType, a.Action, a.Reason, a.PayloadSHA, a.WorkflowID, a.RunID,
		a.ActivityID, a.Refs,
		d.DraftOrderID, d.Scope.UserIDHash, d.Scope.Tool, d.Scope.IdempotencyKey, d.Total.QuoteID, d.Total.QuoteHash,
		d.Total.Currency, d.Total.GrandTotal.Amount, total, d.ShipTo.Country, d.ShipTo.Region, d.ShipTo.PostalCode,
		d.ShipTo.Ciphertext, d.ShipTo.Nonce, d.ShipTo.KeyID, d.CorrelationID, d.WorkflowID, d.RunID,
		d.CreatedAt, d.ExpiresAt, reservations, d.WorkflowType, signerKeyID, signature).
		Scan(&outcome, &c.Audit.AuditID, &auditStatus, &c.Audit.Tool, &c.Audit.Closed,
			&c.Draft.DraftOrderID, &c.Draft.Status, &c.Draft.QuoteHash, &c.Draft.GrandTotal.Amount,
			&c.Draft.GrandTotal.Currency, &expires, &short)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
			// Bad data or a violated check: retrying cannot help.
			return Created{}, &PermanentError{Err: fmt.Errorf("draft orders: create: %w", err)}
		}
		return Created{}, fmt.Errorf("draft orders: create: %w", err)
	}
	c.Outcome = CreateOutcome(outcome)
	if len(short) > 0 {
		if err := json.Unmarshal(short, &c.Short); err != nil {
			return Created{}, fmt.Errorf("draft orders: decode short lines: %w", err)
		}
	}
	c.Audit.Status = evidence.AuditStatus(auditStatus)
	if expires != nil {
		c.Draft.ExpiresAt = expires.UTC()
	}
	return c, nil
}

// sign signs d's row as draft_order_create will write it (total is its
// encoded total), with the worker's key (docs/evidence.md#draft-row-signatures):
// the signature and the key id.
func (s PGDrafts) sign(d NewDraft, total []byte) (string, string, error) {
	if s.Signer == nil {
		return "", "", errors.New("draft orders: no row signer: every draft row names its author")
	}
	c := evidence.DraftRowContent{
		DraftOrderID: d.DraftOrderID, UserIDHash: d.Scope.UserIDHash, Tool: d.Scope.Tool,
		IdempotencyKey: d.Scope.IdempotencyKey, QuoteID: d.Total.QuoteID, QuoteHash: d.Total.QuoteHash,
		Currency: d.Total.Currency, GrandTotalMinor: d.Total.GrandTotal.Amount, Total: total,
		ShipToCountry: d.ShipTo.Country, ShipToRegion: d.ShipTo.Region, ShipToPostal: d.ShipTo.PostalCode,
		ShipToSealed: d.ShipTo.Ciphertext, ShipToNonce: d.ShipTo.Nonce, ShipToKeyID: d.ShipTo.KeyID,
		CorrelationID: d.CorrelationID, WorkflowID: d.WorkflowID, RunID: d.RunID, WorkflowType: d.WorkflowType,
		CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt,
	}
	sig, err := s.Signer.SignDraft(&c)
	return sig, c.SignerKeyID, err
}
