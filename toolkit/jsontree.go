package toolkit

import (
	"bytes"
	"encoding/json"
)

// A call's input and output are each decoded once (decodeJSON) and the
// decoded value serves the schema check, sanitising and the input digest,
// which used to decode the same bytes again each (docs/tools.md#pipeline).

// decodeJSON decodes the first JSON value of raw exactly as gojsonschema's
// bytes loader does (a decoder with UseNumber, which also keeps amounts in
// minor units exact), so validating the result is validating raw.
func decodeJSON(raw []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

type sanitizedJSON struct {
	Sanitized
	json json.RawMessage
	// canonical: json is in RFC 8785 form already.
	canonical bool
}

func sanitizeJSON(raw []byte) (sanitizedJSON, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return sanitizedJSON{}, err
	}
	return sanitizeTree(v)
}

// sanitizeTree is sanitizeJSON of a value decodeJSON returned.
func sanitizeTree(v any) (sanitizedJSON, error) {
	s := Sanitize(v)
	b, err := json.Marshal(s.Value)
	if err != nil {
		return sanitizedJSON{}, err
	}
	return sanitizedJSON{Sanitized: s, json: b}, nil
}

// sanitizedOutput is sanitizeTree of tree, the decoded raw, in canonical
// form (RFC 8785): canonicalTree writes the sanitised value's canonical
// bytes directly, and they are both the answer's JSON and what its hash
// hashes, with no second encoding and no parse by jcs
// (docs/performance.md#the-tool-pipeline). A value canonicalTree leaves
// to jcs is encoded as before: raw itself when sanitising changed nothing.
func sanitizedOutput(raw json.RawMessage, tree any) (sanitizedJSON, error) {
	s := Sanitize(tree)
	if c, ok := canonicalTree(s.Value); ok {
		return sanitizedJSON{Sanitized: s, json: c, canonical: true}, nil
	}
	if s.Changed {
		b, err := json.Marshal(s.Value)
		if err != nil {
			return sanitizedJSON{}, err
		}
		return sanitizedJSON{Sanitized: s, json: b}, nil
	}
	return sanitizedJSON{Sanitized: s, json: raw}, nil
}

// hash is OutputHash of the JSON; when that is the tool's own bytes and
// they repeat a key (a json.RawMessage in its data), which the canonical
// form refuses, the JSON becomes the decoded value, encoded, as it was
// before the tool's bytes were kept.
func (o *sanitizedJSON) hash() (string, error) {
	if o.canonical {
		h := HashBytes(o.json)
		outputHashes.put(o.json, h) // the evidence store hashes it again
		return h, nil
	}
	h, err := OutputHash(o.json)
	if err != nil && !o.Changed {
		if o.json, err = json.Marshal(o.Value); err == nil {
			h, err = OutputHash(o.json)
		}
	}
	return h, err
}

// inputFingerprint is CanonicalHash(rawIn) for rawIn decoded as tree,
// without decoding it a second time where the decoded tree gives the same
// canonical bytes (canonicalDecoded).
func inputFingerprint(rawIn json.RawMessage, tree any) (string, error) {
	if c, ok := canonicalDecoded(rawIn, tree); ok {
		return HashBytes(c), nil
	}
	return CanonicalHash(rawIn)
}

// inputDigest hashes the sanitised input, so the digest identifies the
// call without being a dictionary key for the raw PII it may hold.
func inputDigest(rawIn json.RawMessage) (string, error) {
	clean, err := sanitizeJSON(rawIn)
	if err != nil {
		return "", err
	}
	return CanonicalHash(clean.json)
}

// inputDigestOf is inputDigest of the validated input, given decoded
// (tree) and its canonical hash (the envelope's input fingerprint, and
// fpErr the error computing it). When sanitising changes nothing the
// sanitised input is the input, the same JSON value, and a canonical form
// depends only on the value: the digest is the fingerprint, without
// canonicalising the same value twice. When the fingerprint failed (jcs
// refuses some JSON encoding/json accepts, such as a duplicate key), the
// sanitised value is hashed as before.
func inputDigestOf(tree any, fingerprint string, fpErr error) func() (string, error) {
	return func() (string, error) {
		s := Sanitize(tree)
		if !s.Changed && fpErr == nil {
			return fingerprint, nil
		}
		b, err := json.Marshal(s.Value)
		if err != nil {
			return "", err
		}
		return CanonicalHash(json.RawMessage(b))
	}
}
