package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// SnapshotRecord is one stored evidence snapshot as the auditor sees it:
// every clear column, never the raw output (ReadRaw is the only way to it).
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
	Output         json.RawMessage `json:"output"`
	OutputHash     string          `json:"output_hash"`
	HasRaw         bool            `json:"has_raw"`
	RawKeyID       string          `json:"raw_key_id,omitempty"`
	RulesetVersion string          `json:"ruleset_version"`
	TTLSeconds     int             `json:"ttl_seconds"`
	Status         string          `json:"status"`
	CreatedAt      time.Time       `json:"created_at"`
	RecordedAt     time.Time       `json:"recorded_at"`
	ContentHash    string          `json:"content_hash"`
	PrevChainHash  string          `json:"prev_chain_hash"`
	ChainHash      string          `json:"chain_hash"`

	rawCiphertext []byte
	rawNonce      []byte
}

// content is what a row's content hash covers: every column except the
// output itself (covered through output_hash, which verify recomputes), the
// chain links and the database's recorded_at.
type content struct {
	SnapshotID     string `json:"snapshot_id"`
	ChainKey       string `json:"chain_key"`
	ChainSeq       int64  `json:"chain_seq"`
	Tool           string `json:"tool"`
	ToolVersion    string `json:"tool_version"`
	Build          string `json:"build"`
	WorkflowID     string `json:"workflow_id"`
	RunID          string `json:"run_id"`
	ActivityID     string `json:"activity_id"`
	ActivityType   string `json:"activity_type"`
	Attempt        int32  `json:"attempt"`
	RequestID      string `json:"request_id"`
	CorrelationID  string `json:"correlation_id"`
	UserIDHash     string `json:"user_id_hash"`
	InputDigest    string `json:"input_digest"`
	OutputHash     string `json:"output_hash"`
	RawDigest      string `json:"raw_digest"`
	RawKeyID       string `json:"raw_key_id"`
	RulesetVersion string `json:"ruleset_version"`
	TTLSeconds     int    `json:"ttl_seconds"`
	Status         string `json:"status"`
	CreatedAt      string `json:"created_at"`
}

// contentHash is the canonical (RFC 8785) hash of the row's content.
func (r *SnapshotRecord) contentHash() (string, error) {
	return toolkit.CanonicalHash(content{
		SnapshotID: r.SnapshotID, ChainKey: r.ChainKey, ChainSeq: r.ChainSeq,
		Tool: r.Tool, ToolVersion: r.ToolVersion, Build: r.Build,
		WorkflowID: r.WorkflowID, RunID: r.RunID, ActivityID: r.ActivityID, ActivityType: r.ActivityType,
		Attempt: r.Attempt, RequestID: r.RequestID, CorrelationID: r.CorrelationID,
		UserIDHash: r.UserIDHash, InputDigest: r.InputDigest, OutputHash: r.OutputHash,
		RawDigest: rawDigest(r.rawNonce, r.rawCiphertext), RawKeyID: r.RawKeyID,
		RulesetVersion: r.RulesetVersion, TTLSeconds: r.TTLSeconds, Status: r.Status,
		CreatedAt: r.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
	})
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
	created_at, recorded_at, content_hash, prev_chain_hash, chain_hash`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner) (*SnapshotRecord, error) {
	var r SnapshotRecord
	var output []byte
	err := row.Scan(&r.SnapshotID, &r.ChainKey, &r.ChainSeq, &r.Tool, &r.ToolVersion, &r.Build, &r.WorkflowID,
		&r.RunID, &r.ActivityID, &r.ActivityType, &r.Attempt, &r.RequestID, &r.CorrelationID, &r.UserIDHash,
		&r.InputDigest, &output, &r.OutputHash, &r.rawCiphertext, &r.rawNonce, &r.RawKeyID, &r.RulesetVersion,
		&r.TTLSeconds, &r.Status, &r.CreatedAt, &r.RecordedAt, &r.ContentHash, &r.PrevChainHash, &r.ChainHash)
	if err != nil {
		return nil, err
	}
	r.Output = json.RawMessage(output)
	r.HasRaw = r.rawCiphertext != nil
	r.CreatedAt = r.CreatedAt.UTC()
	r.RecordedAt = r.RecordedAt.UTC()
	return &r, nil
}
