package evidence

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"sort"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/keyring"
)

// Writers: the processes that sign rows, each with its own Ed25519 ring
// (docs/evidence.md#row-signatures). A worker's key signs the rows of
// activities and the draft rows; the MCP gateway's key signs direct calls'
// rows only, so a gateway key cannot make a workflow's evidence.
const (
	WriterWorker  = "worker"
	WriterGateway = "gateway"
)

// Signing rings hold Ed25519 seeds (32 bytes); verifying rings the public
// keys (32 bytes). Only the writing process holds its seeds: a verifier,
// holding public keys only, cannot make a row it would accept.
var (
	signingKeys = map[string]keyring.Spec{
		WriterWorker: {Prefix: "evidence", Noun: "worker row-signing key", KeysVar: "CARTWRIGHT_WORKER_SIGNING_KEYS",
			IDVar: "CARTWRIGHT_WORKER_SIGNING_KEY_ID", MinBytes: ed25519.SeedSize, MaxBytes: ed25519.SeedSize,
			Unset: "the worker signs every evidence row and draft row it writes"},
		WriterGateway: {Prefix: "evidence", Noun: "gateway row-signing key", KeysVar: "CARTWRIGHT_GATEWAY_SIGNING_KEYS",
			IDVar: "CARTWRIGHT_GATEWAY_SIGNING_KEY_ID", MinBytes: ed25519.SeedSize, MaxBytes: ed25519.SeedSize,
			Unset: "the MCP gateway signs the evidence rows of the calls it answers"},
	}
	publicKeys = map[string]keyring.Spec{
		WriterWorker: {Prefix: "evidence", Noun: "worker row public key", KeysVar: "CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS",
			IDVar: "CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS", MinBytes: ed25519.PublicKeySize, MaxBytes: ed25519.PublicKeySize,
			Unset: "verify, the audit and reconcile check every signed row against the worker's public keys"},
		WriterGateway: {Prefix: "evidence", Noun: "gateway row public key", KeysVar: "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS",
			IDVar: "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS", MinBytes: ed25519.PublicKeySize, MaxBytes: ed25519.PublicKeySize,
			Unset: "verify, the audit and reconcile check every direct call's row against the gateway's public keys"},
	}
)

// RowSigner signs rows with the current key of one writer's ring; older
// keys stay in the ring only so that its public keys can be listed.
type RowSigner struct {
	writer string
	keyID  string
	priv   ed25519.PrivateKey
	pub    map[string]ed25519.PublicKey
}

// ParseRowSigner reads writer's signing ring (`id:base64seed,…`) and the id
// of its current key ("" is the first).
func ParseRowSigner(writer, keys, currentID string) (*RowSigner, error) {
	spec, ok := signingKeys[writer]
	if !ok {
		return nil, fmt.Errorf("evidence: no row signer %q", writer)
	}
	ring, err := spec.Parse(keys, currentID)
	if err != nil {
		return nil, err
	}
	s := &RowSigner{writer: writer, pub: map[string]ed25519.PublicKey{}}
	for _, id := range ring.IDs() {
		seed, _ := ring.Key(id)
		priv := ed25519.NewKeyFromSeed(seed)
		s.pub[id] = priv.Public().(ed25519.PublicKey)
		if id == ring.CurrentID() {
			s.keyID, s.priv = id, priv
		}
	}
	return s, nil
}

// KeyID is the id of the key that signs.
func (s *RowSigner) KeyID() string { return s.keyID }

// sign signs msg with the current key.
func (s *RowSigner) sign(msg []byte) string {
	return base64.RawStdEncoding.EncodeToString(ed25519.Sign(s.priv, msg))
}

// PublicRing is the ring's public keys in the form the verifiers' variable
// takes (`id:base64key,…`): what an operator hands the auditors.
func (s *RowSigner) PublicRing() string {
	ids := make([]string, 0, len(s.pub))
	for id := range s.pub {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ","
		}
		out += id + ":" + base64.StdEncoding.EncodeToString(s.pub[id])
	}
	return out
}

// RowKeys are the public keys rows are verified with, each tagged with its
// writer. Key ids are unique across writers.
type RowKeys struct {
	byID map[string]rowKey
}

type rowKey struct {
	writer string
	pub    ed25519.PublicKey
}

// ParseRowKeys reads the public rings of the worker and of the gateway
// (`id:base64key,…` each). A ring may be empty; both empty is an error: a
// verifier without keys cannot tell a written row from a forged one.
func ParseRowKeys(worker, gateway string) (*RowKeys, error) {
	k := &RowKeys{byID: map[string]rowKey{}}
	for _, w := range []struct{ writer, text string }{{WriterWorker, worker}, {WriterGateway, gateway}} {
		if keyring.Empty(w.text) {
			continue
		}
		ring, err := publicKeys[w.writer].Parse(w.text, "")
		if err != nil {
			return nil, err
		}
		for _, id := range ring.IDs() {
			if err := k.add(w.writer, id, ring); err != nil {
				return nil, err
			}
		}
	}
	if len(k.byID) == 0 {
		return nil, fmt.Errorf("evidence: neither %s nor %s is set: %s", publicKeys[WriterWorker].KeysVar,
			publicKeys[WriterGateway].KeysVar, publicKeys[WriterWorker].Unset)
	}
	return k, nil
}

func (k *RowKeys) add(writer, id string, ring *keyring.Ring) error {
	if prev, dup := k.byID[id]; dup {
		return fmt.Errorf("evidence: row key id %q is both the %s's and the %s's: ids must be unique", id, prev.writer, writer)
	}
	pub, _ := ring.Key(id)
	k.byID[id] = rowKey{writer: writer, pub: ed25519.PublicKey(pub)}
	return nil
}

// RowKeysOf are the public keys of signers: a process verifying what it
// and its peers wrote (tests, a worker's reconcile without the variables).
func RowKeysOf(signers ...*RowSigner) *RowKeys {
	k := &RowKeys{byID: map[string]rowKey{}}
	for _, s := range signers {
		if s == nil {
			continue
		}
		for id, pub := range s.pub {
			k.byID[id] = rowKey{writer: s.writer, pub: pub}
		}
	}
	return k
}

// With returns k and the keys of more (k unchanged); a key id already in
// k keeps k's key.
func (k *RowKeys) With(more *RowKeys) *RowKeys {
	out := &RowKeys{byID: map[string]rowKey{}}
	for _, src := range []*RowKeys{more, k} {
		if src == nil {
			continue
		}
		for id, v := range src.byID {
			out.byID[id] = v
		}
	}
	return out
}

// verify checks sig (base64) over msg by the key keyID names, and returns
// the key's writer; "" and a reason when it does not verify.
func (k *RowKeys) verify(keyID, sig string, msg []byte) (string, string) {
	if k == nil || len(k.byID) == 0 {
		return "", "no row public keys are configured"
	}
	key, ok := k.byID[keyID]
	if !ok {
		return "", fmt.Sprintf("signer key %q is none of the configured public keys", keyID)
	}
	raw, err := base64.RawStdEncoding.DecodeString(sig)
	if err != nil || !ed25519.Verify(key.pub, msg, raw) {
		return "", fmt.Sprintf("the signature does not verify under %s key %q", key.writer, keyID)
	}
	return key.writer, ""
}

// evidenceRowMessage is what an evidence row's signature signs: a domain
// and the row's content hash (hash format 3), which covers its chain key
// and snapshot id. The database places the row: its chain key is signed,
// its snapshot id is the table's key (a signed row cannot appear twice),
// and verify checks the links around it.
func evidenceRowMessage(contentHash string) []byte {
	return []byte("cartwright/evidence-row/3\x00" + contentHash)
}

// signRow makes r a hash format 3 row signed by s: its signer key id, its
// content hash and its signature. A gateway signs direct calls' rows only.
func (s *RowSigner) signRow(r *SnapshotRecord) error {
	if s.writer == WriterGateway && !isDirect(r) {
		return fmt.Errorf("evidence: the gateway's key signs direct calls' rows only, not %s of %s", r.SnapshotID, r.ChainKey)
	}
	r.HashFormat, r.SignerKeyID = hashFormatSigned, s.keyID
	h, err := r.contentHash()
	if err != nil {
		return fmt.Errorf("evidence: content hash: %w", err)
	}
	r.ContentHash, r.RowSignature = h, s.sign(evidenceRowMessage(h))
	return nil
}

// isDirect reports whether r is a direct call's row (docs/evidence.md#direct-calls).
func isDirect(r *SnapshotRecord) bool {
	return r.WorkflowID == "" && r.ActivityType == DirectActivityType
}

// RowSignerFromConfig reads writer's signing ring from cfg.
func RowSignerFromConfig(cfg config.Config, writer string) (*RowSigner, error) {
	switch writer {
	case WriterWorker:
		return ParseRowSigner(writer, cfg.WorkerSigningKeys, cfg.WorkerSigningKeyID)
	case WriterGateway:
		return ParseRowSigner(writer, cfg.GatewaySigningKeys, cfg.GatewaySigningKeyID)
	}
	return nil, fmt.Errorf("evidence: no row signer %q", writer)
}

// RowKeysFromConfig reads the writers' public rings from cfg; nil, and no
// error, when neither is set (a process that verifies with its own
// signer's keys only).
func RowKeysFromConfig(cfg config.Config) (*RowKeys, error) {
	if keyring.Empty(cfg.WorkerRowPublicKeys) && keyring.Empty(cfg.GatewayRowPublicKeys) {
		return nil, nil
	}
	return ParseRowKeys(cfg.WorkerRowPublicKeys, cfg.GatewayRowPublicKeys)
}
