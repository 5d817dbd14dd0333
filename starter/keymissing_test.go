package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// TestStatusNamesAMissingWorkerKey: `starter draft-order status` of a draft
// order its worker cannot decrypt (the worker's ring lacks the key the
// order's payloads are under) names that key, in its one line and as
// details.key_id with --json, and exits 2 (it could not answer).
func TestStatusNamesAMissingWorkerKey(t *testing.T) {
	const newKey = "rotated-2"
	spec := newKey + ":" + base64.StdEncoding.EncodeToString(codectest.Key(newKey)) + "," + codectest.Spec()
	dial := func(spec, current string) sdkclient.Client {
		ring, err := codec.ParseKeyRing(spec, current)
		if err != nil {
			t.Fatal(err)
		}
		opts := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
		codec.Apply(&opts, codec.New(ring))
		c, err := sdkclient.Dial(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	testenv.Integration(t)
	s := wiringtest.StartWith(t, wiringtest.Options{Temporal: dial(spec, newKey)})
	s.Env(t)
	t.Setenv("CARTWRIGHT_PAYLOAD_KEYS", spec)
	t.Setenv("CARTWRIGHT_PAYLOAD_KEY_ID", newKey)
	file := filepath.Join(t.TempDir(), "order.json")
	order := `{"request": {"user_id": "u_cli", "currency": "EUR", "client": {"app": "cli"}},
 "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 2}],
 "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}}`
	if err := os.WriteFile(file, []byte(order), 0o600); err != nil {
		t.Fatal(err)
	}
	key := freshKey("keys")
	var started startResult
	if r := jsonOut(t, &started, "draft-order", "start", "-f", file, "--key", key); r.code != 0 {
		t.Fatalf("start: exit %d: %s", r.code, r.stderr)
	}

	s.Worker.Stop()
	s.WorkerOn(t, wiringtest.Options{Temporal: dial(codectest.Spec(), codectest.KeyID)}, s.TaskQueue)
	line := runCLI(t, "", "draft-order", "status", started.WorkflowID)
	line.oneLineErr(t, "status with the worker's key missing", exitCannot, "UPSTREAM_ERROR", `payload key "rotated-2"`)
	t.Logf("%s", line.stderr)
	r := runCLI(t, "", "--json", "draft-order", "status", started.WorkflowID)
	var out struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Error.Details["key_id"] != newKey {
		t.Fatalf("--json status: %v %+v\n%s", err, out, r.stdout)
	}
}
