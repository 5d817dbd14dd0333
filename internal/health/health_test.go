package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

// TestProbeFollowsTheWorker: not ready before the worker started or while
// the database fails; live until a fatal error, then neither.
func TestProbeFollowsTheWorker(t *testing.T) {
	dbErr := errors.New("connection refused")
	var pingErr error
	p := &Probe{Ping: func(context.Context) error { return pingErr }}
	h := p.Handler()
	steps := []struct {
		what        string
		do          func()
		live, ready int
	}{
		{"before start", func() {}, 200, 503},
		{"started", p.Started, 200, 200},
		{"database down", func() { pingErr = dbErr }, 200, 503},
		{"database back", func() { pingErr = nil }, 200, 200},
		{"fatal", func() { p.Fatal(errors.New("namespace not found")) }, 503, 503},
	}
	for _, s := range steps {
		s.do()
		if live, ready := get(t, h, LivePath), get(t, h, ReadyPath); live != s.live || ready != s.ready {
			t.Fatalf("%s: livez %d readyz %d, want %d %d", s.what, live, ready, s.live, s.ready)
		}
	}
}
