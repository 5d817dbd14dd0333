package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// SnapshotRecord is one stored evidence snapshot as the auditor sees it:
// every clear column, never the raw output (ReadRaw is the only way to it).
// Its content hash covers every field not tagged hash:"-" (contentHash).
type SnapshotRecord struct {
	SnapshotID string `json:"snapshot_id"`
	ChainKey   string `json:"chain_key"`
	// ChainSeq is the row's place in its chain. The chain links stand for
	// it (verify checks the seqs run 1..n, each row linked to the one
	// before); only hash format 1 also hashes it into the content.
	ChainSeq int64 `json:"chain_seq" hash:"-"`
	// HashFormat says how ContentHash was computed (hashFormat*).
	HashFormat     int             `json:"hash_format" hash:"-"`
	Tool           string          `json:"tool"`
	ToolVersion    string          `json:"tool_version"`
	Build          string          `json:"build"`
	WorkflowID     string          `json:"workflow_id"`
	RunID          string          `json:"run_id"`
	ActivityID     string          `json:"activity_id"`
	ActivityType   string          `json:"activity_type"`
	Attempt        int32           `json:"attempt"`
	RequestID      string          `json:"request_id"`
	CorrelationID  string          `json:"correlation_id"`
	UserIDHash     string          `json:"user_id_hash"`
	InputDigest    string          `json:"input_digest"`
	Output         json.RawMessage `json:"output" hash:"-"`
	OutputHash     string          `json:"output_hash"`
	HasRaw         bool            `json:"has_raw" hash:"-"`
	RawKeyID       string          `json:"raw_key_id,omitempty"`
	RulesetVersion string          `json:"ruleset_version"`
	TTLSeconds     int             `json:"ttl_seconds"`
	Status         string          `json:"status"`
	CreatedAt      time.Time       `json:"created_at"`
	RecordedAt     time.Time       `json:"recorded_at" hash:"-"`
	ContentHash    string          `json:"content_hash" hash:"-"`
	PrevChainHash  string          `json:"prev_chain_hash" hash:"-"`
	ChainHash      string          `json:"chain_hash" hash:"-"`
	// TraceID is the W3C trace id of the call's span ("" untraced). It
	// locates the call in a tracing backend and proves nothing, so it is
	// not hashed (rows written before it existed verify unchanged).
	TraceID string `json:"trace_id,omitempty" hash:"-"`
	// WorkflowType is the type of the run whose activity wrote the row, as
	// the worker's activity info says ("" outside a workflow, and in rows
	// of hash formats 1 and 2, which did not record it). SignerKeyID names
	// the key whose RowSignature signs the row. All three are hashed only
	// in hash format 3 (contentView), and the signature only signs.
	WorkflowType string `json:"workflow_type,omitempty" hash:"-"`
	SignerKeyID  string `json:"signer_key_id,omitempty" hash:"-"`
	RowSignature string `json:"row_signature,omitempty" hash:"-"`

	rawCiphertext []byte
	rawNonce      []byte
	// canon memoises CanonicalOutput (nil: not memoised); a pointer, so a
	// copied record copies no lock.
	canon *canonicalOutput
}

type canonicalOutput struct {
	once sync.Once
	b    []byte
	err  error
}

// CanonicalOutput is the RFC 8785 form of the stored output, whose hash
// Verify compares with output_hash. A record read from the store computes
// it once: the auditor verifies a chain and then compares each envelope
// of the history with the same records (docs/performance.md#audit-rate).
func (r *SnapshotRecord) CanonicalOutput() ([]byte, error) {
	if r.canon == nil {
		return toolkit.Canonical(r.Output)
	}
	r.canon.once.Do(func() { r.canon.b, r.canon.err = toolkit.Canonical(r.Output) })
	return r.canon.b, r.canon.err
}

// StoredOutputHash is the hash of CanonicalOutput: what output_hash must
// be.
func (r *SnapshotRecord) StoredOutputHash() (string, error) {
	c, err := r.CanonicalOutput()
	if err != nil {
		return "", err
	}
	return toolkit.HashBytes(c), nil
}

// Content hash formats, stored per row in hash_format (migration 00190,
// docs/evidence.md#content-hash-formats). Verify picks the formula by the row's.
const (
	// hashFormatSeqInContent: the canonical content includes chain_seq,
	// which only the locked chain knows, so the database finished the hash
	// around it (evidence_append and the functions built on it, migrations
	// 00080, 00081, 00180). Every row written before migration 00190, and
	// by a build still calling those functions, has it.
	hashFormatSeqInContent = 1
	// hashFormatContentOnly: the canonical content without chain_seq and
	// with "hash_format": 2, so Go computes the hash whole before the row
	// has a place; the database only links it (evidence_append_row).
	hashFormatContentOnly = 2
	// hashFormatSigned: format 2's content with "hash_format": 3, the
	// writing run's workflow type and the signer's key id, and an Ed25519
	// signature by the writing process over the content hash
	// (docs/evidence.md#row-signatures). Every row since migration 00240.
	hashFormatSigned = 3
)

// contentHash is the canonical (RFC 8785) hash of the row's content in its
// hash format: every field but those tagged hash:"-" (the output itself,
// covered through output_hash, which verify recomputes; has_raw, which
// raw_digest covers; the chain links and the database's recorded_at),
// plus raw_digest, plus chain_seq (format 1) or hash_format (format 2).
// created_at is hashed in the microsecond form PostgreSQL stores.
func (r *SnapshotRecord) contentHash() (string, error) {
	view, err := r.contentView()
	if err != nil {
		return "", err
	}
	return toolkit.CanonicalHash(view)
}

func (r *SnapshotRecord) contentView() (map[string]any, error) {
	view, err := toolkit.HashView(r)
	if err != nil {
		return nil, err
	}
	view["created_at"] = r.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	view["raw_digest"] = rawDigest(r.rawNonce, r.rawCiphertext)
	switch r.HashFormat {
	case hashFormatSeqInContent:
		view["chain_seq"] = r.ChainSeq
	case hashFormatContentOnly:
		// The format is hashed too: a row whose marker is changed
		// verifies under neither formula.
		view["hash_format"] = hashFormatContentOnly
	case hashFormatSigned:
		view["hash_format"] = hashFormatSigned
		view["workflow_type"] = r.WorkflowType
		view["signer_key_id"] = r.SignerKeyID
	default:
		return nil, fmt.Errorf("unknown content hash format %d", r.HashFormat)
	}
	return view, nil
}

// rawDigest binds the ciphertext and its nonce into the content hash
// without exposing anything about the plaintext.
func rawDigest(nonce, ciphertext []byte) string {
	if ciphertext == nil {
		return ""
	}
	h := sha256.New()
	h.Write(nonce)
	h.Write(ciphertext)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// chainHash links a row to its predecessor: sha256(prev || content).
func chainHash(prev, contentHash string) string {
	return toolkit.HashBytes([]byte(prev + contentHash))
}

// snapshotColumns is the select list scanRecord reads, in order.
const snapshotColumns = `snapshot_id, chain_key, chain_seq, hash_format, tool, tool_version, build, workflow_id, run_id,
	activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash, input_digest, output,
	output_hash, raw_ciphertext, raw_nonce, coalesce(raw_key_id, ''), ruleset_version, ttl_seconds, status,
	created_at, recorded_at, content_hash, prev_chain_hash, chain_hash, coalesce(trace_id, ''),
	coalesce(workflow_type, ''), coalesce(signer_key_id, ''), coalesce(row_signature, '')`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner) (*SnapshotRecord, error) {
	var r SnapshotRecord
	var output []byte
	err := row.Scan(&r.SnapshotID, &r.ChainKey, &r.ChainSeq, &r.HashFormat, &r.Tool, &r.ToolVersion, &r.Build, &r.WorkflowID,
		&r.RunID, &r.ActivityID, &r.ActivityType, &r.Attempt, &r.RequestID, &r.CorrelationID, &r.UserIDHash,
		&r.InputDigest, &output, &r.OutputHash, &r.rawCiphertext, &r.rawNonce, &r.RawKeyID, &r.RulesetVersion,
		&r.TTLSeconds, &r.Status, &r.CreatedAt, &r.RecordedAt, &r.ContentHash, &r.PrevChainHash, &r.ChainHash, &r.TraceID,
		&r.WorkflowType, &r.SignerKeyID, &r.RowSignature)
	if err != nil {
		return nil, err
	}
	r.Output = json.RawMessage(output)
	r.canon = &canonicalOutput{}
	r.HasRaw = r.rawCiphertext != nil
	r.CreatedAt = r.CreatedAt.UTC()
	r.RecordedAt = r.RecordedAt.UTC()
	return &r, nil
}
