package stripefake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Account is the state of one connected account the fake serves.
type Account struct {
	ChargesEnabled bool
	PayoutsEnabled bool
	CurrentlyDue   []string
	PastDue        []string
	EventuallyDue  []string
	DisabledReason string
}

// Fault is an injected answer for the next matching requests.
type Fault struct {
	// Status is the HTTP status to answer (e.g. 429, 500); 0 answers
	// normally after Delay.
	Status int
	// RetryAfter is sent as the Retry-After header when not empty.
	RetryAfter string
	// Delay is slept before answering.
	Delay time.Duration
	// Times is how many requests get the fault; 0 means every request.
	Times int
}

// Request is a request the fake received.
type Request struct {
	Method         string
	Path           string
	IdempotencyKey string
	HasAuth        bool
	Form           url.Values
	At             time.Time
	// Abandoned: the caller gave up (closed the request) while the fake
	// still held it for a fault's Delay.
	Abandoned bool
}

// Server is the fake Stripe API.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	accounts map[string]*Account
	faults   map[string][]*Fault // by "METHOD /kind"
	requests []Request
	// idem replays the answer to a POST with a known idempotency key, as
	// Stripe does.
	idem map[string][]byte
}

// New starts a fake; it is closed when the test's Close is called.
func New() *Server {
	s := &Server{accounts: map[string]*Account{}, faults: map[string][]*Fault{}, idem: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// SetAccount creates or replaces an account's state.
func (s *Server) SetAccount(id string, a Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := a
	s.accounts[id] = &c
}

// Endpoint kinds for faults.
const (
	GetAccount  = "GET account"
	AccountLink = "POST account_link"
	LoginLink   = "POST login_link"
)

// Inject queues a fault for an endpoint kind.
func (s *Server) Inject(kind string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := f
	s.faults[kind] = append(s.faults[kind], &c)
}

// ClearFaults removes every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string][]*Fault{}
}

// Requests returns the requests of one kind received so far ("" = all).
func (s *Server) Requests(kind string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if kind == "" || kindOf(r.Method, r.Path) == kind {
			out = append(out, r)
		}
	}
	return out
}

// Count is len(Requests(kind)).
func (s *Server) Count(kind string) int { return len(s.Requests(kind)) }

func kindOf(method, path string) string {
	switch {
	case method == http.MethodGet && strings.HasPrefix(path, "/v1/accounts/") && strings.Count(path, "/") == 3:
		return GetAccount
	case method == http.MethodPost && path == "/v1/account_links":
		return AccountLink
	case method == http.MethodPost && strings.HasSuffix(path, "/login_links"):
		return LoginLink
	}
	return method + " " + path
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	kind := kindOf(r.Method, r.URL.Path)
	req := Request{Method: r.Method, Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"),
		HasAuth: r.Header.Get("Authorization") != "", Form: r.PostForm, At: time.Now()}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	at := len(s.requests) - 1
	fault := s.takeFault(kind)
	s.mu.Unlock()

	if fault != nil {
		if fault.Delay > 0 {
			select {
			case <-time.After(fault.Delay):
			case <-r.Context().Done():
				s.mu.Lock()
				s.requests[at].Abandoned = true
				s.mu.Unlock()
				return
			}
		}
		if fault.Status != 0 {
			if fault.RetryAfter != "" {
				w.Header().Set("Retry-After", fault.RetryAfter)
			}
			typ, code := "api_error", ""
			if fault.Status == http.StatusTooManyRequests {
				typ, code = "invalid_request_error", "rate_limit"
			}
			writeError(w, fault.Status, typ, code, "injected fault")
			return
		}
	}
	switch kind {
	case GetAccount:
		s.getAccount(w, strings.TrimPrefix(r.URL.Path, "/v1/accounts/"))
	case AccountLink:
		s.post(w, req, r.PostForm.Get("account"), func(now time.Time) map[string]any {
			return map[string]any{"object": "account_link", "created": now.Unix(), "expires_at": now.Add(5 * time.Minute).Unix(),
				"url": "https://connect.stripe.test/setup/s/" + r.PostForm.Get("account") + "/" + token()}
		})
	case LoginLink:
		acct := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/accounts/"), "/login_links")
		s.post(w, req, acct, func(now time.Time) map[string]any {
			return map[string]any{"object": "login_link", "created": now.Unix(),
				"url": "https://connect.stripe.test/express/" + acct + "/" + token()}
		})
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "unknown endpoint")
	}
}

func (s *Server) takeFault(kind string) *Fault {
	q := s.faults[kind]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			s.faults[kind] = q[1:]
		}
	}
	return f
}

func (s *Server) getAccount(w http.ResponseWriter, id string) {
	s.mu.Lock()
	a, ok := s.accounts[id]
	var body map[string]any
	if ok {
		body = map[string]any{
			"id": id, "object": "account", "type": "express",
			"charges_enabled": a.ChargesEnabled, "payouts_enabled": a.PayoutsEnabled,
			"details_submitted": a.ChargesEnabled,
			"requirements": map[string]any{
				"currently_due": nonNil(a.CurrentlyDue), "past_due": nonNil(a.PastDue),
				"eventually_due": nonNil(a.EventuallyDue), "pending_verification": []string{},
				"disabled_reason": nullable(a.DisabledReason), "errors": []any{}, "alternatives": []any{},
			},
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such account: '"+id+"'")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) post(w http.ResponseWriter, req Request, acct string, build func(time.Time) map[string]any) {
	s.mu.Lock()
	_, known := s.accounts[acct]
	if prev, ok := s.idem[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		s.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(prev)
		return
	}
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "account_invalid", "No such account")
		return
	}
	body, _ := json.Marshal(build(time.Now()))
	s.mu.Lock()
	if req.IdempotencyKey != "" {
		s.idem[req.IdempotencyKey] = body
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake_"+token()[:8])
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func token() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
