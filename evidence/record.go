package evidence

import (
	"bytes"
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
	SnapshotID     string          `json:"snapshot_id"`
	ChainKey       string          `json:"chain_key"`
	ChainSeq       int64           `json:"chain_seq"`
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

// contentHash is the canonical (RFC 8785) hash of the row's content:
// every field but those tagged hash:"-" (the output itself, covered through
// output_hash, which verify recomputes; has_raw, which raw_digest covers;
// the chain links and the database's recorded_at), plus raw_digest.
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
	return view, nil
}

// seqKey is how the canonical form writes the chain_seq key. Outside a
// string a quote is a delimiter and inside one it is escaped, so these
// bytes can only be the top-level key (the view has no nested objects).
const seqKey = `"chain_seq":`

// contentHashParts is the canonical form contentHash hashes, cut around the
// chain_seq value (whatever r.ChainSeq says), so the database, which alone
// knows the row's place in its chain, can finish the hash:
// contentHash = HashBytes(head + decimal(chain_seq) + tail). RFC 8785
// writes an integer up to 2^53 as its plain decimal digits.
func (r *SnapshotRecord) contentHashParts() (head, tail []byte, err error) {
	view, err := r.contentView()
	if err != nil {
		return nil, nil, err
	}
	view["chain_seq"] = 0
	c, err := toolkit.Canonical(view)
	if err != nil {
		return nil, nil, err
	}
	marker := []byte(seqKey + "0")
	i := bytes.Index(c, marker)
	if i < 0 || bytes.Count(c, []byte(seqKey)) != 1 {
		return nil, nil, fmt.Errorf("canonical content has %d chain_seq keys", bytes.Count(c, []byte(seqKey)))
	}
	return c[:i+len(seqKey)], c[i+len(marker):], nil
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
const snapshotColumns = `snapshot_id, chain_key, chain_seq, tool, tool_version, build, workflow_id, run_id,
	activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash, input_digest, output,
	output_hash, raw_ciphertext, raw_nonce, coalesce(raw_key_id, ''), ruleset_version, ttl_seconds, status,
	created_at, recorded_at, content_hash, prev_chain_hash, chain_hash, coalesce(trace_id, '')`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner) (*SnapshotRecord, error) {
	var r SnapshotRecord
	var output []byte
	err := row.Scan(&r.SnapshotID, &r.ChainKey, &r.ChainSeq, &r.Tool, &r.ToolVersion, &r.Build, &r.WorkflowID,
		&r.RunID, &r.ActivityID, &r.ActivityType, &r.Attempt, &r.RequestID, &r.CorrelationID, &r.UserIDHash,
		&r.InputDigest, &output, &r.OutputHash, &r.rawCiphertext, &r.rawNonce, &r.RawKeyID, &r.RulesetVersion,
		&r.TTLSeconds, &r.Status, &r.CreatedAt, &r.RecordedAt, &r.ContentHash, &r.PrevChainHash, &r.ChainHash, &r.TraceID)
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
