package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Finding kinds of AuditDirect (docs/audit.md#direct-calls).
const (
	// DirectChainBroken: Verify's checks failed on a direct call's chain
	// (a row edited, missing, or out of its chain).
	DirectChainBroken = "chain_broken"
	// DirectWrongChain: a snapshot is not in the chain its own user id
	// hash and request id name, or is not a direct call's.
	DirectWrongChain = "wrong_chain"
	// DirectEnvelopeMismatch: the envelope kept under a key does not state
	// its snapshot: another snapshot id, tool, status or hash, or data
	// that does not hash to the snapshot's output hash.
	DirectEnvelopeMismatch = "envelope_mismatch"
	// DirectUnbound: an answer (or a refusal that keeps its key) with no
	// binding to its key: given without the same-key guarantee.
	DirectUnbound = "unbound_answer"
)

// DirectFinding is one defect of the direct calls, naming its chain and
// snapshot.
type DirectFinding struct {
	Kind       string `json:"kind"`
	ChainKey   string `json:"chain_key"`
	SnapshotID string `json:"snapshot_id,omitempty"`
	Detail     string `json:"detail"`
}

// DirectReport is the audit of the read-only calls answered without a
// workflow since a time: Clean when there is no finding.
type DirectReport struct {
	Since     time.Time       `json:"since"`
	Calls     int             `json:"calls"`
	Chains    int             `json:"chains"`
	Snapshots int             `json:"snapshots"`
	Findings  []DirectFinding `json:"findings"`
	Clean     bool            `json:"clean"`
}

// AuditDirect checks every direct call's evidence written since since
// without a history (docs/audit.md#direct-calls): each chain as Verify
// walks a workflow's (content, output and chain hashes, no row missing,
// the head), each snapshot in the chain its own columns name (so a key
// reaches only its user's answer), each binding's envelope against its
// snapshot (snapshot id, tool, status, output hash, the data or refusal
// recomputed), and every answer bound to its key. The error is only for
// failing to read.
func (s *Store) AuditDirect(ctx context.Context, since time.Time) (DirectReport, error) {
	rep := DirectReport{Since: since, Findings: []DirectFinding{}}
	rows, err := s.list(ctx, `chain_key IN (SELECT chain_key FROM evidence_snapshots
		WHERE activity_type = '`+DirectActivityType+`' AND workflow_id = '' AND created_at >= $1)
		ORDER BY chain_key, chain_seq`, since)
	if err != nil {
		return rep, err
	}
	heads, err := s.directHeads(ctx, since)
	if err != nil {
		return rep, err
	}
	bindings, err := s.directBindings(ctx, since)
	if err != nil {
		return rep, err
	}
	auth, err := s.authorship(ctx)
	if err != nil {
		return rep, err
	}
	find := func(kind, chain, id, format string, args ...any) {
		rep.Findings = append(rep.Findings, DirectFinding{Kind: kind, ChainKey: chain, SnapshotID: id, Detail: fmt.Sprintf(format, args...)})
	}
	byID := map[string]*SnapshotRecord{}
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].ChainKey == rows[i].ChainKey {
			j++
		}
		chain := rows[i].ChainKey
		rep.Chains++
		var v VerifyReport
		v.OK = true
		verifyChain(&v, rows[i:j], heads[chain], auth)
		for _, p := range v.Problems {
			find(DirectChainBroken, chain, p.SnapshotID, "%s: %s", p.Kind, p.Detail)
		}
		for _, r := range rows[i:j] {
			byID[r.SnapshotID] = r
			if want := DirectChainKey(r.UserIDHash, r.RequestID); r.ActivityType != DirectActivityType || r.WorkflowID != "" || r.ChainKey != want {
				find(DirectWrongChain, chain, r.SnapshotID, "activity type %q, workflow %q, in chain %s; its user and request name %s",
					r.ActivityType, r.WorkflowID, r.ChainKey, want)
			}
		}
		i = j
	}
	rep.Snapshots = len(rows)
	bound := map[string]bool{}
	for _, b := range bindings {
		rep.Calls++
		bound[b.snapshotID] = true
		r := byID[b.snapshotID]
		if r == nil || r.ChainKey != b.chainKey {
			find(DirectWrongChain, b.chainKey, b.snapshotID, "the key's answer names a snapshot outside its chain")
			continue
		}
		if d := envelopeStates(b, r); d != "" {
			find(DirectEnvelopeMismatch, b.chainKey, r.SnapshotID, "%s", d)
		}
	}
	for _, r := range rows {
		if !bound[r.SnapshotID] && keepsKey(r) {
			find(DirectUnbound, r.ChainKey, r.SnapshotID, "status %s, kept by no key", r.Status)
		}
	}
	rep.Clean = len(rep.Findings) == 0
	return rep, nil
}

// directBinding is one row of evidence_direct_calls.
type directBinding struct {
	chainKey, tool, fingerprint, snapshotID string
	envelope                                toolkit.Response
	raw                                     []byte
}

func (s *Store) directBindings(ctx context.Context, since time.Time) ([]directBinding, error) {
	res, err := s.pool.Query(ctx, `SELECT chain_key, tool, fingerprint, snapshot_id, envelope FROM evidence_direct_calls
		WHERE chain_key IN (SELECT chain_key FROM evidence_snapshots
			WHERE activity_type = '`+DirectActivityType+`' AND workflow_id = '' AND created_at >= $1)`, since)
	if err != nil {
		return nil, dbError("list direct calls", err)
	}
	defer res.Close()
	var out []directBinding
	for res.Next() {
		var b directBinding
		if err := res.Scan(&b.chainKey, &b.tool, &b.fingerprint, &b.snapshotID, &b.raw); err != nil {
			return nil, dbError("scan direct call", err)
		}
		if err := json.Unmarshal(b.raw, &b.envelope); err != nil {
			b.envelope = toolkit.Response{}
		}
		out = append(out, b)
	}
	if err := res.Err(); err != nil {
		return nil, dbError("list direct calls", err)
	}
	return out, nil
}

func (s *Store) directHeads(ctx context.Context, since time.Time) (map[string]*chainHead, error) {
	res, err := s.pool.Query(ctx, `SELECT chain_key, last_seq, last_hash FROM evidence_chain_heads
		WHERE chain_key IN (SELECT chain_key FROM evidence_snapshots
			WHERE activity_type = '`+DirectActivityType+`' AND workflow_id = '' AND created_at >= $1)`, since)
	if err != nil {
		return nil, dbError("read chain heads", err)
	}
	defer res.Close()
	out := map[string]*chainHead{}
	for res.Next() {
		var key string
		var h chainHead
		if err := res.Scan(&key, &h.seq, &h.hash); err != nil {
			return nil, dbError("scan chain head", err)
		}
		out[key] = &h
	}
	return out, res.Err()
}

// envelopeStates says how the envelope kept under a key differs from its
// snapshot, "" when it states it.
func envelopeStates(b directBinding, r *SnapshotRecord) string {
	env := b.envelope
	if env.Tool != r.Tool || b.tool != r.Tool {
		return fmt.Sprintf("envelope of %q, binding of %q, snapshot of %s", env.Tool, b.tool, r.Tool)
	}
	if env.Evidence == nil || env.Evidence.SnapshotID != r.SnapshotID {
		return "the envelope names another snapshot"
	}
	if len(env.Evidence.Sources) == 0 || env.Evidence.Sources[0].Hash != r.OutputHash {
		return "the envelope states another output hash"
	}
	var what json.RawMessage
	if r.Status == string(toolkit.StatusError) {
		if env.OK || env.Error == nil {
			return "the snapshot is a refusal, the envelope an answer"
		}
		raw, err := json.Marshal(env.Error)
		if err != nil {
			return "the envelope's error does not encode"
		}
		what = raw
	} else {
		if !env.OK || string(env.Status) != r.Status {
			return fmt.Sprintf("envelope ok=%v status %s, snapshot status %s", env.OK, env.Status, r.Status)
		}
		what = env.Data
	}
	if h, err := toolkit.CanonicalHash(what); err != nil || h != r.OutputHash {
		return fmt.Sprintf("the envelope's data hashes to %s, the snapshot's output to %s", h, r.OutputHash)
	}
	return ""
}

// keepsKey is whether a direct snapshot is an answer its key must keep
// (toolkit.Code.KeepsKey, docs/envelope.md#idempotency).
func keepsKey(r *SnapshotRecord) bool {
	if r.Status != string(toolkit.StatusError) {
		return true
	}
	var e toolkit.Error
	if json.Unmarshal(r.Output, &e) != nil {
		return true
	}
	return e.Code.KeepsKey()
}
