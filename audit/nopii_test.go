package audit_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// Planted personal data: values no fixture, catalog or rule holds, so any
// occurrence in Temporal's store came from these workflows.
var plantedPII = []string{
	"Zebulon Quackenbush",           // name
	"Wunderlichgasse 4217",          // street
	"zebulon.q@planted-pii.example", // e-mail
	"+49 30 98765432",               // phone
}

// TestNoPIIInTemporalsStore runs a draft order that waits for staff (an
// approval signal), a confirmed one and an onboarding on a dev server of
// its own, with planted personal data in the orders' shipping address and
// the merchant's row, then reads the server's raw SQLite store: none of
// the planted values may occur in it. A control workflow started by a
// client without the codec shows the scan would have found them. Then the
// same histories decode through the codec server with a staff token, and
// the audit of each is CLEAN.
func TestNoPIIInTemporalsStore(t *testing.T) {
	dev := testenv.StartDevServer(t, testenv.DevServerOptions{})
	s := newRealStackOn(t, clienttest.DialAt(t, dev.Address))
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(4*time.Minute))
	defer cancel()

	to := commerce.Address{Name: plantedPII[0], Line1: plantedPII[1], City: "Sydney", Region: "NSW", PostalCode: "2000", Country: "AU"}
	id1, run1 := s.draftOrderID(t, orderInput(uniqueKey("nopii-approve"), chocolate, to, "AUD"),
		driver{decision: "approve", approver: "carol.admin", reason: "call " + plantedPII[3] + " first"})
	to.Country, to.City, to.Region, to.PostalCode = "DE", "Berlin", "", "10117"
	id2, run2 := s.draftOrderID(t, orderInput(uniqueKey("nopii"), tees, to, "EUR"), driver{})

	tq, fake := s.startOnboardingWorker(t)
	merchantID := "m_nopii_" + uniqueKey("x")[2:]
	testenv.AdminExec(t, s.pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, contact_email, contact_phone, country, business_type)
		VALUES ($1, $2, $3, $4, $5, 'GB', 'individual')`,
		merchantID, "acct_1NoPii"+merchantID[len(merchantID)-8:], plantedPII[0], plantedPII[2], plantedPII[3])
	id3, run3, res := s.runOnboardingOf(t, tq, fake, merchantID, "acct_1NoPii"+merchantID[len(merchantID)-8:])
	if res.State != onboardingflow.StateOnboarded {
		t.Fatalf("onboarding ended %+v", res)
	}

	// The control: a plain client (no codec) writes a marker in clear.
	control := "CONTROL-" + uniqueKey("marker")
	plain, err := client.DialContext(ctx, client.Options{HostPort: dev.Address, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	crun, err := plain.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "control-" + control, TaskQueue: "nobody-polls-this"},
		"NoSuchWorkflow", map[string]string{"marker": control})
	if err != nil {
		t.Fatal(err)
	}
	_ = plain.TerminateWorkflow(ctx, crun.GetID(), crun.GetRunID(), "control done")

	// Read the raw store (the SQLite file and its write-ahead log).
	raw := readStore(t, dev.DBFile)
	if !bytes.Contains(raw, []byte(control)) {
		t.Fatalf("the control marker is not in the raw store (%d bytes): the scan reads nothing", len(raw))
	}
	if !bytes.Contains(raw, []byte(id1)) {
		t.Fatalf("workflow id %s not in the raw store: the scan reads nothing", id1)
	}
	for _, v := range plantedPII {
		if n := bytes.Count(raw, []byte(v)); n != 0 {
			t.Errorf("planted value %q occurs %d time(s) in Temporal's raw store", v, n)
		}
	}
	t.Logf("raw store: %d bytes scanned, control marker found, 0 planted values", len(raw))

	// Through the codec server, with a staff token: the histories decode
	// (the planted name is back) and audit CLEAN.
	srv := httptest.NewServer(s.ws.Deps.Codec)
	defer srv.Close()
	token, err := codecserver.IssueToken(ctx, testenv.IssuerPool(t, s.pool.Config().ConnString()), "alice.support", "nopii test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ id, run string }{{id1, run1}, {id2, run2}, {id3, run3}} {
		remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
			Endpoint: srv.URL + codecserver.PathPrefix,
			ModifyRequest: func(req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("X-Namespace", "default")
				req.Header.Set(codecserver.HeaderWorkflowID, r.id)
				return nil
			},
		})
		h := historyOf(t, ctx, plain, r.id, r.run)
		deps := s.deps
		deps.DataConverter = converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), remote)
		rep, err := audit.Audit(ctx, deps, audit.FromHistory(h))
		logReport(t, rep)
		if audit.ExitCode(rep, err) != audit.ExitClean {
			t.Fatalf("audit of %s through the codec server: exit %d (%v), findings %v", r.id, audit.ExitCode(rep, err), err, rep.Findings)
		}
		if r.id == id1 {
			var in draftorder.Input
			start := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
			if err := deps.DataConverter.FromPayloads(start.GetInput(), &in); err != nil || in.ShipTo.Name != plantedPII[0] {
				t.Fatalf("decoded input through the codec server: %+v, %v", in.ShipTo, err)
			}
		}
	}
	var decodes int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM evidence_access_log
		WHERE kind = 'payload_decode' AND reader = 'alice.support' AND workflow_id = ANY($1)`,
		[]string{id1, id2, id3}).Scan(&decodes); err != nil || decodes == 0 {
		t.Fatalf("decodes logged: %d, %v", decodes, err)
	}
	t.Logf("%d decode requests logged for alice.support", decodes)

	// Key rotation: a new current key, the test key kept to decrypt. The
	// old run still audits (replays) CLEAN; without the old key the audit
	// cannot run and says which key id it lacks.
	newKey := base64.StdEncoding.EncodeToString(codectest.Key("rotated-2"))
	rotated, err := codec.ParseKeyRing("rotated-2:"+newKey+","+codectest.Spec(), "rotated-2")
	if err != nil {
		t.Fatal(err)
	}
	deps := s.deps
	deps.DataConverter = codec.New(rotated).DataConverter()
	rep, err := audit.Audit(ctx, deps, audit.FromHistory(historyOf(t, ctx, plain, id2, run2)))
	if audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("audit after rotation: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	if p, _ := deps.DataConverter.ToPayload("x"); codec.KeyIDOf(p) != "rotated-2" {
		t.Fatalf("after rotation new payloads use key %q", codec.KeyIDOf(p))
	}
	dropped, _ := codec.ParseKeyRing("rotated-2:"+newKey, "")
	deps.DataConverter = codec.New(dropped).DataConverter()
	rep, err = audit.Audit(ctx, deps, audit.FromHistory(historyOf(t, ctx, plain, id2, run2)))
	// The missing key, and nothing else: without it the markers and
	// envelopes are unreadable, and reporting their genuine snapshots as
	// extra (or missing) would tell an auditor evidence was forged.
	if code := audit.ExitCode(rep, err); code != audit.ExitCannotRun || err != nil || len(rep.Findings) != 1 ||
		rep.Findings[0].Kind != audit.KindMissingPayloadKey || !strings.Contains(rep.Findings[0].Detail, `"`+codectest.KeyID+`"`) {
		t.Fatalf("audit without the old key: exit %d, %v, findings %v; want one missing_payload_key finding naming %s", code, err, rep.Findings, codectest.KeyID)
	}
	t.Logf("without the retired key: %s", fmtReport(rep, err))
}

func fmtReport(rep audit.Report, err error) string {
	var b strings.Builder
	_ = rep.WriteText(&b)
	if err != nil {
		b.WriteString(err.Error())
	}
	return b.String()
}

// draftOrderID runs a draft order and returns its workflow and run ids.
func (s *realStack) draftOrderID(t *testing.T, in draftorder.Input, d driver) (string, string) {
	t.Helper()
	runID, res := s.runDraftOrder(t, s.tq, in, d)
	if res.State != draftorder.StateDraftCreated {
		t.Fatalf("draft order ended %s, want %s", res.State, draftorder.StateDraftCreated)
	}
	id, err := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	if err != nil {
		t.Fatal(err)
	}
	return id, runID
}

// historyOf fetches a run's history as stored (c has no codec).
func historyOf(t *testing.T, ctx context.Context, c client.Client, id, runID string) *historypb.History {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	// As exported without a codec, nothing planted is readable.
	js, _ := protojson.Marshal(h)
	for _, v := range plantedPII {
		if strings.Contains(string(js), v) {
			t.Fatalf("history of %s as exported without the codec holds %q", id, v)
		}
	}
	return h
}

func readStore(t *testing.T, dbFile string) []byte {
	t.Helper()
	var all []byte
	files, _ := filepath.Glob(dbFile + "*") // temporal.db, -wal, -shm
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) { // a -journal SQLite removed meanwhile
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}
