package codec

import (
	"crypto/rand"
	"errors"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Metadata of an encrypted payload. The encoding tells the UI and the CLI
// that the data is opaque without the codec; the key id picks the key.
const (
	EncodingEncrypted = "binary/encrypted"
	MetadataEncoding  = converter.MetadataEncoding
	MetadataKeyID     = "encryption-key-id"
	MetadataCipher    = "encryption-cipher"
	cipherName        = "AES-256-GCM"
)

// ErrUnknownKey is the cause of a decode failure for a payload whose key id
// the ring does not hold (errors.Is).
var ErrUnknownKey = errors.New("codec: unknown payload key id")

// Codec is the encrypting converter.PayloadCodec.
type Codec struct{ ring *KeyRing }

var _ converter.PayloadCodec = (*Codec)(nil)

// New makes the codec of ring.
func New(ring *KeyRing) *Codec { return &Codec{ring: ring} }

// Encode encrypts each payload (its whole protobuf, metadata included, so
// the encoding and the message type are hidden too) under the current key.
// A payload that is already encrypted is kept as it is: encoding twice
// would only make it unreadable to a single decode.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	id := c.ring.CurrentID()
	aead := c.ring.keys[id]
	for i, p := range payloads {
		if isEncrypted(p) {
			out[i] = p
			continue
		}
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "codec: marshal payload: %v", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, toolkit.Errorf(toolkit.UpstreamError, "codec: random nonce: %v", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:    []byte(id),
				MetadataCipher:   []byte(cipherName),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(id)),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec encrypted and passes every other
// payload through untouched: a signal typed into the Web UI's form or sent
// with `temporal workflow signal --input` arrives as plain json/plain, and
// histories written before the codec existed stay readable. The workflow's
// own input checks see those payloads exactly as before.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if !isEncrypted(p) {
			out[i] = p
			continue
		}
		d, err := c.decrypt(p)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func (c *Codec) decrypt(p *commonpb.Payload) (*commonpb.Payload, error) {
	id := string(p.GetMetadata()[MetadataKeyID])
	if id == "" {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "codec: encrypted payload has no %s metadata", MetadataKeyID)
	}
	aead, ok := c.ring.keys[id]
	if !ok {
		return nil, toolkit.Errorf(toolkit.InvalidArgument,
			"codec: payload is encrypted under key id %q, which this key ring (%s) does not hold: add that key to CARTWRIGHT_PAYLOAD_KEYS",
			id, strings.Join(c.ring.IDs(), ", ")).WithDetail("key_id", id).WithCause(ErrUnknownKey)
	}
	data := p.GetData()
	if len(data) < aead.NonceSize()+aead.Overhead() {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "codec: encrypted payload under key id %q is truncated (%d bytes)", id, len(data))
	}
	nonce, sealed := data[:aead.NonceSize()], data[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, []byte(id))
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument,
			"codec: payload under key id %q does not decrypt (wrong key material for that id, or the payload was altered)", id)
	}
	var d commonpb.Payload
	if err := proto.Unmarshal(plain, &d); err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "codec: payload under key id %q: %v", id, err)
	}
	return &d, nil
}

func isEncrypted(p *commonpb.Payload) bool {
	return string(p.GetMetadata()[MetadataEncoding]) == EncodingEncrypted
}

// DataConverter is the SDK's default converter (JSON and friends) with
// this codec applied to every payload; inside a workflow, a payload under a
// key id the ring lacks stops the workflow task (see missingkey.go).
func (c *Codec) DataConverter() converter.DataConverter { return c.dataConverter(nil) }

func (c *Codec) dataConverter(logger log.Logger) converter.DataConverter {
	return &dataConverter{DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c), log: logger}
}

// FailureConverter encodes failure messages and stack traces as a payload
// (EncodeCommonAttributes) through dc, so an error message that quotes an
// address is encrypted like any other payload.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: dc, EncodeCommonAttributes: true,
	})
}

// KeyIDOf is the key id an encrypted payload names ("" for any other).
func KeyIDOf(p *commonpb.Payload) string {
	if !isEncrypted(p) {
		return ""
	}
	return string(p.GetMetadata()[MetadataKeyID])
}

// String describes the ring for logs: ids only, never key material.
func (r *KeyRing) String() string { return r.ring.String() }
