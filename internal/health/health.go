package health

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// pingTimeout bounds the database check of one /readyz request: well under
// the probe's own timeout (the chart sets 3 s).
const pingTimeout = 2 * time.Second

// Probe is the process's state as the probes see it. The zero value is
// not started and not failed; Ping nil skips the database check.
type Probe struct {
	// Ping checks the database (pgxpool.Pool.Ping).
	Ping    func(context.Context) error
	started atomic.Bool
	fatal   atomic.Pointer[string]
}

// Started marks the worker as polling (or, for a process that does not
// poll, serving what it serves).
func (p *Probe) Started() { p.started.Store(true) }

// Fatal records that the worker stopped for good (worker.Options.OnFatalError).
func (p *Probe) Fatal(err error) {
	msg := "fatal"
	if err != nil {
		msg = err.Error()
	}
	p.fatal.Store(&msg)
}

// Status is the body of both probes.
type Status struct {
	OK       bool   `json:"ok"`
	Started  bool   `json:"started"`
	Database string `json:"database,omitempty"`
	Fatal    string `json:"fatal,omitempty"`
}

// Live reports whether the process should keep running.
func (p *Probe) Live() Status {
	st := Status{Started: p.started.Load(), OK: true}
	if f := p.fatal.Load(); f != nil {
		st.OK, st.Fatal = false, *f
	}
	return st
}

// Ready reports whether the process does its work: started, not failed,
// and the database answering.
func (p *Probe) Ready(ctx context.Context) Status {
	st := p.Live()
	if !st.Started {
		st.OK = false
	}
	if p.Ping != nil {
		ctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			st.OK, st.Database = false, "unreachable"
		} else {
			st.Database = "ok"
		}
	}
	return st
}

// Paths the Handler serves.
const (
	LivePath  = "/livez"
	ReadyPath = "/readyz"
)

// Handler serves LivePath and ReadyPath: 200 when OK, else 503, with the
// Status as JSON.
func (p *Probe) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LivePath, func(w http.ResponseWriter, _ *http.Request) { write(w, p.Live()) })
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) { write(w, p.Ready(r.Context())) })
	return mux
}

func write(w http.ResponseWriter, st Status) {
	w.Header().Set("Content-Type", "application/json")
	if !st.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(st)
}
