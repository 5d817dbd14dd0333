package faults

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault kinds the proxy injects in front of stripe-mock.
const (
	fault5xx     = "5xx"
	fault429     = "429"
	faultTimeout = "timeout"
	faultReset   = "reset"
)

// faultProxy forwards to stripe-mock and, while armed, answers every other
// request with the next fault of its cycle instead: a 500 or 503, a 429
// with Retry-After, a response that never comes (the tool's timeout fires),
// a connection reset. Once complete is set, account reads come back with
// the account fully onboarded (stripe-mock's fixture always has
// requirements due), so an onboarding can finish.
type faultProxy struct {
	URL      string
	upstream string

	mu       sync.Mutex
	armed    bool
	complete bool
	n        int
	next     int
	injected map[string]int
	passed   int
	// intentKeys are the Idempotency-Keys of PaymentIntent creates per
	// draft order (metadata[draft_order_id]); paidFirst are the intents
	// Stripe is to report paid before the order could close them
	// (payments_test.go).
	intentKeys map[string]map[string]bool
	paidFirst  map[string]bool
}

var faultCycle = []string{fault5xx, fault429, faultTimeout, faultReset}

func newFaultProxy(t *testing.T, upstream string) *faultProxy {
	p := &faultProxy{upstream: upstream, injected: map[string]int{}, intentKeys: map[string]map[string]bool{}, paidFirst: map[string]bool{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *faultProxy) arm(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = on
}

func (p *faultProxy) setComplete(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.complete = on
}

// counts returns the injected faults by kind and the requests passed on.
func (p *faultProxy) counts() (map[string]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.injected {
		out[k] = v
	}
	return out, p.passed
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.n++
	fault := ""
	if p.armed && p.n%2 == 1 {
		fault = faultCycle[p.next%len(faultCycle)]
		p.next++
		p.injected[fault]++
	} else {
		p.passed++
	}
	complete := p.complete
	p.mu.Unlock()

	switch fault {
	case fault5xx:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"type":"api_error","message":"injected: service unavailable"}}`)
		return
	case fault429:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"rate_limit","message":"injected: too many requests"}}`)
		return
	case faultTimeout:
		select { // longer than any Stripe tool's timeout
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
		w.WriteHeader(http.StatusGatewayTimeout)
		return
	case faultReset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // RST, not FIN
				}
				_ = conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	p.forward(w, r, complete)
}

func (p *faultProxy) forward(w http.ResponseWriter, r *http.Request, complete bool) {
	body, _ := io.ReadAll(r.Body)
	if p.intercept(w, r, body) {
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if complete && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/accounts/") && resp.StatusCode == http.StatusOK {
		out = onboarded(out)
	}
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// onboarded rewrites an account object to one that can take charges and
// payouts with nothing due.
func onboarded(raw []byte) []byte {
	var acct map[string]any
	if json.Unmarshal(raw, &acct) != nil {
		return raw
	}
	acct["charges_enabled"], acct["payouts_enabled"], acct["details_submitted"] = true, true, true
	empty := map[string]any{"currently_due": []any{}, "eventually_due": []any{}, "past_due": []any{},
		"pending_verification": []any{}, "errors": []any{}, "disabled_reason": nil, "current_deadline": nil,
		"alternatives": []any{}}
	acct["requirements"] = empty
	fr := map[string]any{}
	for k, v := range empty {
		fr[k] = v
	}
	acct["future_requirements"] = fr
	out, err := json.Marshal(acct)
	if err != nil {
		return raw
	}
	return out
}
