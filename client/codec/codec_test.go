package codec_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

type order struct {
	Name  string `json:"name"`
	Line1 string `json:"line1"`
}

var planted = order{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116"}

func ring(t *testing.T, current string, ids ...string) *codec.KeyRing {
	t.Helper()
	// The ring as a process reads it (CARTWRIGHT_PAYLOAD_KEYS).
	var spec []string
	for _, id := range ids {
		spec = append(spec, id+":"+base64.StdEncoding.EncodeToString(codectest.Key(id)))
	}
	r, err := codec.ParseKeyRing(strings.Join(spec, ","), current)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEncodeHidesTheValueAndNamesTheKey(t *testing.T) {
	dc := codec.New(ring(t, "p1", "p1")).DataConverter()
	p, err := dc.ToPayload(planted)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.Metadata[codec.MetadataEncoding]); got != codec.EncodingEncrypted {
		t.Fatalf("encoding = %q", got)
	}
	if codec.KeyIDOf(p) != "p1" {
		t.Fatalf("key id = %q, want p1", codec.KeyIDOf(p))
	}
	raw, _ := p.Marshal()
	for _, s := range []string{planted.Name, planted.Line1, "json/plain"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("encoded payload still holds %q", s)
		}
	}
	var back order
	if err := dc.FromPayload(p, &back); err != nil || back != planted {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	// Two encodings of one value differ (random nonce): equal inputs are
	// not linkable in the store.
	p2, _ := dc.ToPayload(planted)
	if bytes.Equal(p.Data, p2.Data) {
		t.Fatal("two encodings of the same value are identical")
	}
}

func TestDecodePassesPlainPayloadsThrough(t *testing.T) {
	c := codec.New(ring(t, "p1", "p1"))
	// What the Web UI's signal form or `temporal workflow signal --input`
	// sends: plain JSON that no codec touched.
	plain := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")},
		Data: []byte(`{"decision":"approve"}`)}
	out, err := c.Decode([]*commonpb.Payload{plain})
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != plain {
		t.Fatalf("plain payload was changed: %v", out[0])
	}
	// And an already encrypted payload is not encrypted twice.
	enc, err := c.Encode([]*commonpb.Payload{plain})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Encode(enc)
	if err != nil || again[0] != enc[0] {
		t.Fatalf("re-encoding changed an encrypted payload: %v", err)
	}
}

func TestUnknownKeyIDIsAClearError(t *testing.T) {
	old := codec.New(ring(t, "p0", "p0"))
	enc, err := old.Encode([]*commonpb.Payload{{Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = codec.New(ring(t, "p1", "p1", "p2")).Decode(enc)
	if err == nil {
		t.Fatal("a payload under an unknown key id decoded")
	}
	if !errors.Is(err, codec.ErrUnknownKey) || !strings.Contains(err.Error(), `"p0"`) || toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("err = %v, want INVALID_ARGUMENT naming key id p0", err)
	}
}

func TestTamperedOrMalformedPayloadsFailWithoutPanic(t *testing.T) {
	c := codec.New(ring(t, "p1", "p1"))
	enc, _ := c.Encode([]*commonpb.Payload{{Data: []byte("secret")}})
	flipped := enc[0].Data[len(enc[0].Data)-1] ^ 1
	cases := map[string]*commonpb.Payload{
		"altered": {Metadata: enc[0].Metadata, Data: append(append([]byte{}, enc[0].Data[:len(enc[0].Data)-1]...), flipped)},
		"short":   {Metadata: enc[0].Metadata, Data: []byte{1, 2, 3}},
		"nokey":   {Metadata: map[string][]byte{"encoding": []byte(codec.EncodingEncrypted)}, Data: enc[0].Data},
		"empty":   {Metadata: enc[0].Metadata},
	}
	for name, p := range cases {
		if _, err := c.Decode([]*commonpb.Payload{p}); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// A key id moved onto another key's ciphertext does not decrypt (the
	// id is authenticated data).
	two := codec.New(ring(t, "p2", "p1", "p2"))
	moved := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte(codec.EncodingEncrypted), codec.MetadataKeyID: []byte("p2")}, Data: enc[0].Data}
	if _, err := two.Decode([]*commonpb.Payload{moved}); err == nil {
		t.Error("a ciphertext relabelled with another key id decoded")
	}
}

func TestRotationKeepsOldPayloadsReadable(t *testing.T) {
	before := codec.New(ring(t, "p1", "p1")).DataConverter()
	old, err := before.ToPayload(planted)
	if err != nil {
		t.Fatal(err)
	}
	// Rotate: p2 encrypts, p1 stays in the ring to decrypt.
	spec := "p2:" + base64.StdEncoding.EncodeToString(codectest.Key("p2")) + ",p1:" + base64.RawURLEncoding.EncodeToString(codectest.Key("p1"))
	r, err := codec.ParseKeyRing(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	after := codec.New(r).DataConverter()
	var back order
	if err := after.FromPayload(old, &back); err != nil || back != planted {
		t.Fatalf("old payload after rotation = %+v, %v", back, err)
	}
	fresh, _ := after.ToPayload(planted)
	if codec.KeyIDOf(fresh) != "p2" {
		t.Fatalf("new payload key id = %q, want p2", codec.KeyIDOf(fresh))
	}
	// Once p1 is dropped, p1's payloads fail by name.
	r2, _ := codec.ParseKeyRing("p2:"+base64.StdEncoding.EncodeToString(codectest.Key("p2")), "")
	if err := codec.New(r2).DataConverter().FromPayload(old, &back); err == nil || !strings.Contains(err.Error(), `"p1"`) {
		t.Fatalf("err = %v, want one naming p1", err)
	}
}

func TestParseKeyRingRefusesBadConfiguration(t *testing.T) {
	k := base64.StdEncoding.EncodeToString(codectest.Key("k"))
	for spec, current := range map[string]string{
		"":                   "",
		"nocolon":            "",
		"a:notbase64!!":      "",
		"a:" + k[:10]:        "",
		"a:" + k + ",a:" + k: "",
		"a:" + k:             "b",
		"with space:" + k:    "",
	} {
		if _, err := codec.ParseKeyRing(spec, current); err == nil {
			t.Errorf("ParseKeyRing(%.12q…, %q) accepted", spec, current)
		} else if strings.Contains(err.Error(), k) {
			t.Errorf("error quotes key material: %v", err)
		}
	}
	r, err := codec.ParseKeyRing("a:"+k+", b:"+k, "b")
	if err != nil || r.CurrentID() != "b" || strings.Join(r.IDs(), ",") != "a,b" {
		t.Fatalf("ring = %v, %v", r, err)
	}
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	dc := codec.New(ring(t, "p1", "p1")).DataConverter()
	fc := codec.FailureConverter(dc)
	f := fc.ErrorToFailure(temporal.NewApplicationError("address "+planted.Line1+" is invalid", string(toolkit.AddressInvalid)))
	raw, _ := f.Marshal()
	if bytes.Contains(raw, []byte(planted.Line1)) {
		t.Fatal("failure message in clear")
	}
	back := fc.FailureToError(f)
	if !strings.Contains(back.Error(), planted.Line1) {
		t.Fatalf("decoded failure = %v", back)
	}
	var ae *temporal.ApplicationError
	if !errors.As(back, &ae) || ae.Type() != string(toolkit.AddressInvalid) {
		t.Fatalf("error type lost: %v", back)
	}
}

// BenchmarkCodecRoundTrip encodes and decodes a draft order's input (about
// 0.5 KB of JSON): the codec's own cost per payload.
func BenchmarkCodecRoundTrip(b *testing.B) {
	dc := codectest.DataConverter()
	in := map[string]any{
		"request": map[string]any{"request_id": "req-bench-0001", "user_id": "u_123", "idempotency_key": "order-2f9c1e77",
			"currency": "EUR", "actor": map[string]string{"type": "user", "id": "u_123"}},
		"items":   []map[string]any{{"sku": "TEE-ORG-M-WHT", "quantity": 2}},
		"ship_to": map[string]string{"name": planted.Name, "line1": planted.Line1, "city": "Berlin", "postal_code": "10115", "country": "DE"},
	}
	for name, dc := range map[string]converter.DataConverter{"json": converter.GetDefaultDataConverter(), "json+codec": dc} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := dc.ToPayload(in)
				if err != nil {
					b.Fatal(err)
				}
				var out map[string]any
				if err := dc.FromPayload(p, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
