package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestStatsPrintsTheKeyFigures serves a telemetry's /metrics that saw two
// calls of one tool, one refused, and checks both outputs.
func TestStatsPrintsTheKeyFigures(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []toolkit.Code{"", toolkit.Forbidden} {
		_, done := tel.Tools.Call(context.Background(), "quote_shipping")
		st := toolkit.StatusOK
		if code != "" {
			st = toolkit.StatusError
		}
		done(toolkit.Outcome{Tool: "quote_shipping", Status: st, Code: code, Denied: code != "", Origin: toolkit.ActorAgent})
	}
	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()

	r := runCLI(t, "", "stats", "--url", srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"quote_shipping", "errors by code: FORBIDDEN 1", "refused before running: quote_shipping FORBIDDEN 1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stats output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "", "stats", "--json", "--url", srv.URL)
	var s telemetry.Summary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || len(s.Tools) != 1 || s.Tools[0].Calls != 2 || s.Tools[0].Errors != 1 {
		t.Fatalf("--json: %v %+v\n%s", err, s, r.stdout)
	}

	srv.Close()
	runCLI(t, "", "stats", "--url", srv.URL).oneLineErr(t, "stats of a closed endpoint", 2, "UPSTREAM_ERROR")
}
