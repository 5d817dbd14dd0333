package wiring_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// TestBuildForReadsOnlyItsRolesKeys: a worker builds what its roles serve
// with only the keys their rows of docs/operators.md#keys-and-grants-per-process
// name, and no more is needed: a webhook, schedules or codec worker starts
// without the evidence key, the quote-seal ring or Stripe's key (it builds
// no tool), a codec worker without the webhook secret. Each role refuses to
// start without a key it does need, naming it.
func TestBuildForReadsOnlyItsRolesKeys(t *testing.T) {
	pool := testenv.Postgres(t)
	tc := clienttest.Dial(t)
	full := wiringtest.Config(testenv.TaskQueue(t), evidencetest.Key())
	// only keeps the keys of a role's row; every other secret is emptied.
	only := func(keep ...string) config.Config {
		c := full
		set := map[string]bool{}
		for _, k := range keep {
			set[k] = true
		}
		for k, clear := range map[string]func(){
			"CARTWRIGHT_EVIDENCE_KEY":    func() { c.EvidenceKey = "" },
			"CARTWRIGHT_SEAL_KEYS":       func() { c.SealKeys, c.SealKeyID = "", "" },
			"CARTWRIGHT_QUOTE_SEAL_KEYS": func() { c.QuoteSealKeys, c.QuoteSealKeyID = "", "" },
			"CARTWRIGHT_PAYLOAD_KEYS":    func() { c.PayloadKeys, c.PayloadKeyID = "", "" },
		} {
			if !set[k] {
				clear()
			}
		}
		return c
	}
	build := func(cfg config.Config, r wiring.Roles) error {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
		defer cancel()
		_, err := wiring.BuildFor(ctx, wiring.Base{Config: cfg, Pool: pool, Temporal: tc}, r)
		return err
	}
	// The payload keys of a polling worker are its Temporal client's
	// (wiring.Connect), not the tools'.
	tools := []string{"CARTWRIGHT_EVIDENCE_KEY", "CARTWRIGHT_SEAL_KEYS", "CARTWRIGHT_QUOTE_SEAL_KEYS"}
	for _, c := range []struct {
		name  string
		roles wiring.Roles
		keys  []string
	}{
		{"workflows", wiring.Roles{Workflows: true}, tools},
		{"activities", wiring.Roles{Activities: true}, tools},
		{"webhook", wiring.Roles{Webhook: true}, nil},
		{"schedules", wiring.Roles{Schedules: true}, nil},
		{"codec", wiring.Roles{Codec: true}, []string{"CARTWRIGHT_SEAL_KEYS", "CARTWRIGHT_PAYLOAD_KEYS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := build(only(c.keys...), c.roles); err != nil {
				t.Fatalf("with only its keys %v: %v", c.keys, err)
			}
			for i, k := range c.keys {
				less := append(append([]string{}, c.keys[:i]...), c.keys[i+1:]...)
				err := build(only(less...), c.roles)
				if err == nil || !strings.Contains(err.Error(), k) {
					t.Errorf("without %s: %v, want a refusal naming it", k, err)
				}
			}
		})
	}
}
