package codecserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
)

const uiOrigin = "http://localhost:8233"

type fakeAuth map[string]string

func (f fakeAuth) Authenticate(_ context.Context, tok string) (string, error) {
	if who, ok := f[tok]; ok {
		return who, nil
	}
	return "", codecserver.ErrBadCredential
}

type fakeLog struct {
	got  []codecserver.Decode
	fail bool
}

func (l *fakeLog) LogDecode(_ context.Context, d codecserver.Decode) error {
	if l.fail {
		return errors.New("database down")
	}
	l.got = append(l.got, d)
	return nil
}

func newServer(log *fakeLog) http.Handler {
	return codecserver.New(codecserver.Options{Codec: codectest.Codec(), Auth: fakeAuth{"tok-alice": "alice.support"},
		Log: log, Origins: []string{uiOrigin}})
}

func call(h http.Handler, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func payloadsJSON(t *testing.T, ps ...*commonpb.Payload) string {
	t.Helper()
	b, err := protojson.Marshal(&commonpb.Payloads{Payloads: ps})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCodecServerAnswersStaffOnlyAndLogsDecodes(t *testing.T) {
	log := &fakeLog{}
	h := newServer(log)
	plain := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"name":"Erika Mustermann"}`)}
	staff := map[string]string{"Authorization": "Bearer tok-alice", "Content-Type": "application/json",
		"X-Namespace": "default", codecserver.HeaderWorkflowID: "draft-order/u_1/k", "Origin": uiOrigin}

	// Preflight: answered without a credential, for the UI's origin only.
	w := call(h, http.MethodOptions, "/codec/decode", "", map[string]string{"Origin": uiOrigin})
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != uiOrigin ||
		w.Header().Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "X-Namespace") {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
	if w := call(h, http.MethodOptions, "/codec/decode", "", map[string]string{"Origin": "http://evil.example"}); w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS let another origin in")
	}

	// Encode with the staff token, then decode it back.
	w = call(h, http.MethodPost, "/codec/encode", payloadsJSON(t, plain), staff)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), "Mustermann") || !strings.Contains(w.Body.String(), "encryption-key-id") {
		t.Fatalf("encode: %d %s", w.Code, w.Body)
	}
	encoded := w.Body.String()
	w = call(h, http.MethodPost, "/codec/decode", encoded, staff)
	var out commonpb.Payloads
	if w.Code != http.StatusOK || protojson.Unmarshal(w.Body.Bytes(), &out) != nil || string(out.Payloads[0].Data) != string(plain.Data) {
		t.Fatalf("decode: %d %s", w.Code, w.Body)
	}
	if len(log.got) != 1 || log.got[0].Reader != "alice.support" || log.got[0].WorkflowID != "draft-order/u_1/k" ||
		log.got[0].Namespace != "default" || log.got[0].Payloads != 1 || !strings.Contains(log.got[0].Via, uiOrigin) {
		t.Fatalf("access log: %+v", log.got)
	}

	// No credential, a wrong one, or one in a cookie that is wrong: 401,
	// and nothing decoded or logged.
	for name, hdr := range map[string]map[string]string{
		"none":   {"Origin": uiOrigin},
		"wrong":  {"Authorization": "Bearer tok-mallory"},
		"cookie": {"Cookie": codecserver.CookieName + "=tok-mallory"},
	} {
		w := call(h, http.MethodPost, "/codec/decode", encoded, hdr)
		if w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), "Mustermann") {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if len(log.got) != 1 {
		t.Fatalf("refused calls were logged: %+v", log.got)
	}
	// A staff token is never a cookie credential: the cookie holds a
	// session id (attack_test.go).
	if w := call(h, http.MethodPost, "/codec/decode", encoded, map[string]string{"Cookie": codecserver.CookieName + "=tok-alice"}); w.Code != http.StatusUnauthorized {
		t.Fatalf("staff token as a cookie: %d", w.Code)
	}
}

func TestCodecServerRefusesWhenTheAccessLogFails(t *testing.T) {
	log := &fakeLog{fail: true}
	h := newServer(log)
	enc := call(h, http.MethodPost, "/codec/encode", payloadsJSON(t, &commonpb.Payload{Data: []byte("secret")}),
		map[string]string{"Authorization": "Bearer tok-alice"}).Body.String()
	w := call(h, http.MethodPost, "/codec/decode", enc, map[string]string{"Authorization": "Bearer tok-alice"})
	if w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("decode without its log row: %d %s", w.Code, w.Body)
	}
}

func TestLoginSetsAnHttpOnlyCookie(t *testing.T) {
	h := newServer(&fakeLog{})
	w := call(h, http.MethodPost, "/codec/login", "token=tok-alice", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	c := w.Result().Cookies()
	if w.Code != http.StatusOK || len(c) != 1 || c[0].Name != codecserver.CookieName || !c[0].HttpOnly || c[0].Path != "/codec" ||
		c[0].SameSite != http.SameSiteLaxMode || c[0].MaxAge <= 0 || c[0].MaxAge > int(codecserver.SessionTTL.Seconds()) ||
		!strings.Contains(w.Body.String(), "alice.support") {
		t.Fatalf("login: %d %v %s", w.Code, c, w.Body)
	}
	w = call(h, http.MethodPost, "/codec/login", "token=nope", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 {
		t.Fatalf("bad login: %d %v", w.Code, w.Result().Cookies())
	}
}

// The sign-in page says who is signed in in this browser, with a sign-out
// button, on every visit, not only right after signing in; without a
// session (or after signing out) it offers the sign-in form.
func TestLoginPageSaysWhoIsSignedIn(t *testing.T) {
	h := newServer(&fakeLog{})
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	in := call(h, http.MethodPost, "/codec/login", "token=tok-alice", form)
	cookie := in.Result().Cookies()[0]
	page := call(h, http.MethodGet, "/codec/login", "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value})
	if body := page.Body.String(); !strings.Contains(body, "Signed in as <b>alice.support</b>") || !strings.Contains(body, `id="signout"`) {
		t.Fatalf("the page of a signed-in browser:\n%s", body)
	}
	call(h, http.MethodPost, "/codec/logout", "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value})
	page = call(h, http.MethodGet, "/codec/login", "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value})
	if body := page.Body.String(); strings.Contains(body, "Signed in as") || !strings.Contains(body, `id="signin"`) {
		t.Fatalf("after signing out:\n%s", body)
	}
}
