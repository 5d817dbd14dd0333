package codecserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

const apr = "apr_0123456789abcdef"

func sealingServer() http.Handler {
	return codecserver.New(codecserver.Options{Codec: codectest.Codec(),
		Auth: fakeAuth{"tok-alice": "alice.support", "tok-bob": "bob.compliance", "dev": codecserver.DevSecretReader},
		Log:  &fakeLog{}, Origins: []string{uiOrigin}, Seals: sealtest.Ring()})
}

// sessionOf signs in with token at the login page and returns the session
// cookie, as a browser holds it.
func sessionOf(t *testing.T, h http.Handler, token string) string {
	t.Helper()
	w := call(h, http.MethodPost, "/codec/login", "token="+token, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	for _, c := range w.Result().Cookies() {
		if c.Name == codecserver.CookieName && w.Code == http.StatusOK {
			return codecserver.CookieName + "=" + c.Value
		}
	}
	t.Fatalf("sign-in with %s: %d %s", token, w.Code, w.Body)
	return ""
}

func jsonPayload(data string) *commonpb.Payload {
	return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}
}

// decodeOne decrypts the one payload of an /encode answer.
func decodeOne(t *testing.T, body []byte) *commonpb.Payload {
	t.Helper()
	var ps commonpb.Payloads
	if err := protojson.Unmarshal(body, &ps); err != nil || len(ps.Payloads) != 1 {
		t.Fatalf("encode answer: %v %s", err, body)
	}
	out, err := codectest.Codec().Decode(ps.Payloads)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// TestEncodeSealsTheSignedInStaffDecision: the Web UI's Signal form sends
// only the decision; the codec server writes the signed-in staff id and a
// seal that verifies, for that decision only.
func TestEncodeSealsTheSignedInStaffDecision(t *testing.T) {
	h := sealingServer()
	cookie := map[string]string{"Cookie": sessionOf(t, h, "tok-bob"), "Origin": uiOrigin}
	w := call(h, http.MethodPost, "/codec/encode", payloadsJSON(t, jsonPayload(`{"approval_id":"`+apr+`","decision":"approve"}`)), cookie)
	if w.Code != http.StatusOK {
		t.Fatalf("encode: %d %s", w.Code, w.Body)
	}
	p := decodeOne(t, w.Body.Bytes())
	var got support.SealedDecision
	if err := json.Unmarshal(p.Data, &got); err != nil || string(p.Metadata["encoding"]) != "json/plain" {
		t.Fatalf("sealed payload %s: %v", p, err)
	}
	if got.Approver != "bob.compliance" || got.ApprovalID != apr || got.Decision != support.DecisionApprove || got.Seal == nil {
		t.Fatalf("sealed decision = %+v", got)
	}
	if err := sealtest.Ring().Verify(got); err != nil {
		t.Fatalf("the seal does not verify: %v", err)
	}
	// Other payloads are encoded as they are.
	w = call(h, http.MethodPost, "/codec/encode", payloadsJSON(t, jsonPayload(`{"quote_hash":"sha256:ab"}`)), cookie)
	if p := decodeOne(t, w.Body.Bytes()); string(p.Data) != `{"quote_hash":"sha256:ab"}` {
		t.Fatalf("a confirm payload was changed: %s", p.Data)
	}
}

// TestEncodeRefusesToSealForSomeoneElse: signed in as alice, a decision
// typed as carol's, one with a seal of its own, and one sent without
// signing in are refused before anything is encoded.
func TestEncodeRefusesToSealForSomeoneElse(t *testing.T) {
	h := sealingServer()
	alice := map[string]string{"Cookie": sessionOf(t, h, "tok-alice"), "Origin": uiOrigin}
	for name, c := range map[string]struct {
		payload string
		hdr     map[string]string
		status  int
		says    string
	}{
		"another approver":  {`{"approval_id":"` + apr + `","decision":"approve","approver":"carol.admin"}`, alice, http.StatusForbidden, "signed in as alice.support"},
		"a seal of its own": {`{"approval_id":"` + apr + `","decision":"approve","seal":{"key_id":"x","issued_at":"x","mac":"00"}}`, alice, http.StatusBadRequest, "leave seal out"},
		"extra fields":      {`{"approval_id":"` + apr + `","decision":"approve","note":"x"}`, alice, http.StatusBadRequest, "not a decision"},
		"not signed in":     {`{"approval_id":"` + apr + `","decision":"approve"}`, map[string]string{"Origin": uiOrigin}, http.StatusUnauthorized, "/codec/login"},
		"the dev secret":    {`{"approval_id":"` + apr + `","decision":"approve"}`, map[string]string{"Authorization": "Bearer dev"}, http.StatusForbidden, "cannot decide"},
		"reject, no reason": {`{"approval_id":"` + apr + `","decision":"reject"}`, alice, http.StatusBadRequest, "needs a reason"},
	} {
		w := call(h, http.MethodPost, "/codec/encode", payloadsJSON(t, jsonPayload(c.payload)), c.hdr)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) || strings.Contains(w.Body.String(), "encryption-key-id") {
			t.Errorf("%s: %d %s, want %d saying %q", name, w.Code, w.Body, c.status, c.says)
		}
	}
}

// TestSealEndpointAndClient: /codec/seal seals for the token's owner; the
// starter's SealClient gets the same seal, and a missing or wrong token is
// UNAUTHORIZED.
func TestSealEndpointAndClient(t *testing.T) {
	srv := httptest.NewServer(sealingServer())
	defer srv.Close()
	ctx := context.Background()
	d := support.Decision{ApprovalID: apr, Decision: support.DecisionReject, Reason: "no UN38.3 summary"}
	got, err := codecserver.SealClient{Endpoint: srv.URL + "/codec", Token: "tok-bob"}.SealDecision(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if got.Approver != "bob.compliance" || got.Reason != d.Reason || sealtest.Ring().Verify(got) != nil {
		t.Fatalf("sealed = %+v", got)
	}
	for token, code := range map[string]toolkit.Code{"": toolkit.Unauthorized, "tok-mallory": toolkit.Unauthorized, "dev": toolkit.Forbidden} {
		_, err := codecserver.SealClient{Endpoint: srv.URL + "/codec", Token: token}.SealDecision(ctx, d)
		if toolkit.CodeOf(err) != code {
			t.Errorf("token %q: %v, want %s", token, err, code)
		}
	}
}
