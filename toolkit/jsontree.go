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

// sanitizedOutput is sanitizeTree of tree, the decoded raw: when
// sanitising changed nothing, the JSON is raw itself, the same value
// encoding the tree again would give (docs/performance.md#the-tool-pipeline).
func sanitizedOutput(raw json.RawMessage, tree any) (sanitizedJSON, error) {
	s := Sanitize(tree)
	if s.Changed {
		b, err := json.Marshal(s.Value)
		if err != nil {
			return sanitizedJSON{}, err
		}
		return sanitizedJSON{Sanitized: s, json: b}, nil
	}
	return sanitizedJSON{Sanitized: s, json: raw}, nil
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
