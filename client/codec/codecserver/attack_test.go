package codecserver_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
)

// clock is a settable time for the throttle and the session store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newClock() *clock               { return &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)} }
func form(token string) string       { return "token=" + token }
func formHdr(h map[string]string) map[string]string {
	out := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

type rig struct {
	h    http.Handler
	log  *fakeLog
	logs *observer.ObservedLogs
	clk  *clock
}

func newRig(t *testing.T) rig {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	clk := newClock()
	log := &fakeLog{}
	h := codecserver.New(codecserver.Options{Codec: codectest.Codec(), Auth: fakeAuth{"tok-alice": "alice.support"},
		Log: log, Origins: []string{uiOrigin}, Logger: zap.New(core), Now: clk.now,
		Sessions: &codecserver.MemorySessions{Now: clk.now}})
	return rig{h: h, log: log, logs: logs, clk: clk}
}

// from sets the client address a request comes from.
func (r rig) from(addr, method, path, body string, hdr map[string]string) int {
	return r.callFrom(addr, method, path, body, hdr).Code
}

func (r rig) callFrom(addr, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.RemoteAddr = addr
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w
}

// A flood of wrong tokens is answered 429 with Retry-After once a client
// has failed FailedSignInsPerMinute times, on the login page and as bearer
// tokens alike; while throttled even the right token is not checked; other
// clients are not affected; after Retry-After the client may try again.
func TestAttackFloodOfWrongTokensIsThrottled(t *testing.T) {
	r := newRig(t)
	const attacker, colleague = "198.51.100.7:40000", "198.51.100.8:40000"
	codes := map[int]int{}
	var retryAfter string
	for i := range 100 {
		var w *httptest.ResponseRecorder
		if i%2 == 0 {
			w = r.callFrom(attacker, http.MethodPost, "/codec/decode", "{}", map[string]string{"Authorization": "Bearer cwst_guess" + strconv.Itoa(i)})
		} else {
			w = r.callFrom(attacker, http.MethodPost, "/codec/login", form("cwst_guess"+strconv.Itoa(i)), formHdr(nil))
		}
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests {
			retryAfter = w.Header().Get("Retry-After")
		}
	}
	if codes[http.StatusUnauthorized] != codecserver.FailedSignInsPerMinute || codes[http.StatusTooManyRequests] != 100-codecserver.FailedSignInsPerMinute {
		t.Fatalf("100 wrong tokens answered %v, want %d×401 then 429", codes, codecserver.FailedSignInsPerMinute)
	}
	secs, err := strconv.Atoi(retryAfter)
	if err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After %q, want whole seconds within a minute", retryAfter)
	}
	if c := r.from(attacker, http.MethodPost, "/codec/login", form("tok-alice"), formHdr(nil)); c != http.StatusTooManyRequests {
		t.Fatalf("the right token from a throttled client: %d, want 429 (a throttled client learns nothing)", c)
	}
	if c := r.from(colleague, http.MethodPost, "/codec/login", form("tok-alice"), formHdr(nil)); c != http.StatusOK {
		t.Fatalf("another client signing in: %d", c)
	}
	// No credential at all (the Web UI before sign-in) is not a failed sign-in.
	for range 20 {
		if c := r.from(colleague, http.MethodPost, "/codec/decode", "{}", nil); c != http.StatusUnauthorized {
			t.Fatalf("decode without a credential: %d", c)
		}
	}
	if c := r.from(colleague, http.MethodPost, "/codec/login", form("tok-alice"), formHdr(nil)); c != http.StatusOK {
		t.Fatalf("requests without a credential throttled the client: %d", c)
	}
	r.clk.add(time.Duration(secs) * time.Second)
	if c := r.from(attacker, http.MethodPost, "/codec/login", form("tok-alice"), formHdr(nil)); c != http.StatusOK {
		t.Fatalf("after Retry-After: %d", c)
	}
	if r.logs.FilterMessage("codec sign-in throttled").Len() == 0 {
		t.Fatal("throttling was not logged")
	}
}

// signIn posts the token and returns the session cookie's value.
func (r rig) signIn(t *testing.T, token string) string {
	t.Helper()
	w := r.callFrom("192.0.2.1:1234", http.MethodPost, "/codec/login", form(token), formHdr(nil))
	if w.Code != http.StatusOK {
		t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == codecserver.CookieName {
			return c.Value
		}
	}
	t.Fatal("sign-in set no cookie")
	return ""
}

// The cookie is a random session id, not the staff token; the staff token
// in the cookie is refused; a revoked (signed-out) or expired session is
// refused; logs name the session by a short hash only.
func TestAttackCookieIsASessionNotTheToken(t *testing.T) {
	r := newRig(t)
	enc := r.callFrom("192.0.2.1:1", http.MethodPost, "/codec/encode", payloadsJSON(t, &commonpb.Payload{Data: []byte("secret")}),
		map[string]string{"Authorization": "Bearer tok-alice"}).Body.String()
	decode := func(cookie string) int {
		return r.from("192.0.2.1:1", http.MethodPost, "/codec/decode", enc, map[string]string{"Cookie": codecserver.CookieName + "=" + cookie, "Origin": uiOrigin})
	}

	sess := r.signIn(t, "tok-alice")
	if sess == "tok-alice" || strings.Contains(sess, "tok-alice") || !strings.HasPrefix(sess, "cwss_") {
		t.Fatalf("the cookie holds %q, not a session id", sess)
	}
	if c := decode(sess); c != http.StatusOK {
		t.Fatalf("decode with the session: %d", c)
	}
	if c := decode("tok-alice"); c != http.StatusUnauthorized {
		t.Fatalf("decode with the staff token as cookie: %d", c)
	}
	for _, e := range r.logs.All() {
		for _, v := range e.ContextMap() {
			if s, ok := v.(string); ok && (strings.Contains(s, sess) || strings.Contains(s, "tok-alice")) {
				t.Fatalf("log %q holds the raw session id or token: %v", e.Message, e.ContextMap())
			}
		}
	}
	if got := r.logs.FilterMessage("codec sign-in").All(); len(got) != 1 || got[0].ContextMap()["session"] != codecserver.SessionRef(sess) {
		t.Fatalf("sign-in log: %v", got)
	}

	// Signed out: the same cookie replayed is refused.
	if c := r.from("192.0.2.1:1", http.MethodPost, "/codec/logout", "", map[string]string{"Cookie": codecserver.CookieName + "=" + sess}); c != http.StatusOK {
		t.Fatalf("sign-out: %d", c)
	}
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode with a revoked session: %d", c)
	}

	// Expired: a session lasts SessionTTL at most.
	sess = r.signIn(t, "tok-alice")
	r.clk.add(codecserver.SessionTTL - time.Minute)
	if c := decode(sess); c != http.StatusOK {
		t.Fatalf("decode before expiry: %d", c)
	}
	r.clk.add(2 * time.Minute)
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode with an expired session: %d", c)
	}
	if len(r.log.got) != 2 {
		t.Fatalf("decodes logged: %+v, want the two that were answered", r.log.got)
	}
}

// A request from an origin that is not allowed is refused 403 before its
// credential is checked or anything decoded or logged: a page on another
// site cannot make a signed-in browser decode (CORS only hides answers).
func TestAttackForeignOriginIsRefusedBeforeDecoding(t *testing.T) {
	r := newRig(t)
	const evil = "http://evil.example"
	plain := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"name":"Erika Mustermann"}`)}
	enc := r.callFrom("192.0.2.1:1", http.MethodPost, "/codec/encode", payloadsJSON(t, plain), map[string]string{"Authorization": "Bearer tok-alice"}).Body.String()
	sess := r.signIn(t, "tok-alice")

	for name, hdr := range map[string]map[string]string{
		"bearer": {"Authorization": "Bearer tok-alice", "Origin": evil},
		"cookie": {"Cookie": codecserver.CookieName + "=" + sess, "Origin": evil},
		"null":   {"Cookie": codecserver.CookieName + "=" + sess, "Origin": "null"},
	} {
		w := r.callFrom("192.0.2.1:1", http.MethodPost, "/codec/decode", enc, hdr)
		if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "Mustermann") || w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s from %s: %d %s", name, hdr["Origin"], w.Code, w.Body)
		}
	}
	if c := r.from("192.0.2.1:1", http.MethodOptions, "/codec/decode", "", map[string]string{"Origin": evil}); c != http.StatusForbidden {
		t.Errorf("preflight from %s: %d", evil, c)
	}
	// Login CSRF: another site cannot sign a browser in (or out).
	if w := r.callFrom("192.0.2.1:1", http.MethodPost, "/codec/login", form("tok-alice"), formHdr(map[string]string{"Origin": evil})); w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
		t.Errorf("login posted from %s: %d %v", evil, w.Code, w.Result().Cookies())
	}
	if len(r.log.got) != 0 || r.logs.FilterMessage("codec decode").Len() != 0 {
		t.Fatalf("a refused origin's decode was logged as a decode: %+v", r.log.got)
	}
	if r.logs.FilterMessage("codec request from a foreign origin refused").Len() == 0 {
		t.Fatal("the refusal was not logged")
	}
	// The UI's origin and the codec server's own login form still work.
	if c := r.from("192.0.2.1:1", http.MethodPost, "/codec/decode", enc, map[string]string{"Cookie": codecserver.CookieName + "=" + sess, "Origin": uiOrigin}); c != http.StatusOK {
		t.Fatalf("decode from the UI's origin: %d", c)
	}
	if c := r.from("192.0.2.1:1", http.MethodPost, "/codec/login", form("tok-alice"), formHdr(map[string]string{"Origin": "http://example.com"})); c != http.StatusOK {
		t.Fatalf("login posted from the codec server's own page: %d", c)
	}
}

// /encode calls are logged with the staff member who made them.
func TestEncodeIsLoggedWithTheStaffID(t *testing.T) {
	r := newRig(t)
	sess := r.signIn(t, "tok-alice")
	if c := r.from("192.0.2.1:1", http.MethodPost, "/codec/encode", payloadsJSON(t, &commonpb.Payload{Data: []byte(`{"a":1}`)}),
		map[string]string{"Cookie": codecserver.CookieName + "=" + sess, "Origin": uiOrigin, "X-Namespace": "default"}); c != http.StatusOK {
		t.Fatalf("encode: %d", c)
	}
	got := r.logs.FilterMessage("codec encode").All()
	if len(got) != 1 || got[0].ContextMap()["staff"] != "alice.support" || got[0].ContextMap()["payloads"] != int64(1) {
		t.Fatalf("encode log: %+v", got)
	}
}
