package wiring_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go.temporal.io/sdk/converter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

const (
	e2eKey    = "sk_test_51E2eOnboardingKey000000000"
	e2eSecret = "whsec_e2eOnboardingSecret00000000"
)

// onboardingStack is the worker's onboarding half on the real dev server:
// the real tools (against a fake Stripe that changes state on demand, the
// test database, the knowledge corpus, the evidence store), the real
// workflow and activities, and the webhook receiver.
type onboardingStack struct {
	t        *testing.T
	tc       client.Client
	fake     *stripefake.Server
	store    *evidence.Store
	hook     *httptest.Server
	logs     *observer.ObservedLogs
	merchant string
	account  string
	wfID     string
	// taskQueue is the queue the stack's worker polls.
	taskQueue string
}

func newOnboardingStack(t *testing.T) *onboardingStack {
	testenv.Integration(t)
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	core, logs := observer.New(zapcore.DebugLevel)
	ws := wiringtest.StartWith(t, wiringtest.Options{
		Logger: zap.New(core),
		Configure: func(c *config.Config) {
			c.StripeSecretKey, c.StripeAPIBase, c.StripeWebhookSecret = e2eKey, fake.URL, e2eSecret
			c.OnboardingReturnURL = "https://shop.example/onboarding/return"
			c.OnboardingRefreshURL = "https://shop.example/onboarding/refresh"
			c.OnboardingDeadline, c.ApprovalWindow = time.Hour, time.Hour
		},
	})
	suffix := randomHex(4)
	s := &onboardingStack{t: t, tc: ws.Temporal, fake: fake, store: ws.Store, logs: logs,
		merchant: "m_e2e_" + suffix, account: "acct_1CwE2e" + suffix, taskQueue: ws.TaskQueue}
	s.wfID, _ = onboardingflow.ID(s.merchant)
	testenv.AdminExec(t, ws.Pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
		VALUES ($1, $2, 'E2E Test Shop', 'GB', 'company', 'in_progress')`, s.merchant, s.account)
	s.fake.SetAccount(s.account, stripefake.Account{
		CurrentlyDue:   []string{"external_account", "tos_acceptance.date", "individual.political_exposure"},
		DisabledReason: "requirements.past_due",
	})
	s.hook = httptest.NewServer(ws.Deps.Webhook.Handler())
	t.Cleanup(s.hook.Close)
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *onboardingStack) status() onboardingflow.Status {
	s.t.Helper()
	// A query sent while the run continues as new waits for the new run's
	// first workflow task; on a busy machine one try can run out, so ask
	// again until the overall deadline, not once.
	deadline := time.Now().Add(testenv.Deadline(60 * time.Second))
	var v converter.EncodedValue
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(10*time.Second))
		var err error
		v, err = s.tc.QueryWorkflow(ctx, s.wfID, "", workflows.QueryStatus)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("query: %v", err)
		}
	}
	var st onboardingflow.Status
	if err := v.Get(&st); err != nil {
		s.t.Fatal(err)
	}
	return st
}

// waitFor polls the status query until ok holds.
func (s *onboardingStack) waitFor(what string, ok func(onboardingflow.Status) bool) onboardingflow.Status {
	s.t.Helper()
	deadline := time.Now().Add(testenv.Deadline(30 * time.Second))
	for {
		st := s.status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(st, "", "  ")
			s.t.Fatalf("timed out waiting for %s; status:\n%s", what, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *onboardingStack) signal(name string, arg any) {
	s.t.Helper()
	if err := s.tc.SignalWorkflow(context.Background(), s.wfID, "", name, arg); err != nil {
		s.t.Fatalf("signal %s: %v", name, err)
	}
}

// deliver posts a signed account.updated event to the receiver.
func (s *onboardingStack) deliver(eventID string) (int, string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"id": eventID, "object": "event", "type": "account.updated", "api_version": "2023-10-16",
		"created": time.Now().Unix(), "account": s.account, "livemode": false,
		"data": map[string]any{"object": map[string]any{"id": s.account, "object": "account"}},
	})
	header := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: e2eSecret}).Header
	req, _ := http.NewRequest(http.MethodPost, s.hook.URL+webhook.Path, bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Status string `json:"status"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a.Status
}

// TestOnboardingEndToEnd drives a whole onboarding on the dev server with
// signals and webhook deliveries: staff review of an ungrounded
// explanation, a duplicate webhook, a dashboard link, continue-as-new, and
// completion when the fake Stripe enables the account.
func TestOnboardingEndToEnd(t *testing.T) {
	s := newOnboardingStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: s.wfID, TaskQueue: s.taskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes: workflows.StartSearchAttributes(workflows.FlowOnboarding, onboardingflow.StateReadingMerchant),
	}, onboardingflow.WorkflowName, onboardingflow.Input{
		MerchantID: s.merchant, Deadline: time.Hour, StatusRetryDelay: 2 * time.Second, ContinueAsNewAfter: 120,
		Request: toolkit.Request{RequestID: "req-e2e-" + randomHex(4), UserID: "u_e2e", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_e2e"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	// 1. Requirements due: a relink URL is out, explanations are cited, and
	// the ungrounded one waits for support staff.
	st := s.waitFor("relink URL and pending review", func(st onboardingflow.Status) bool {
		return st.State == onboardingflow.StateAwaitingMerchant && st.Relink != nil && st.Approval.Pending != nil
	})
	if len(st.Explanations) != 4 {
		t.Fatalf("explanations %+v", st.Explanations)
	}
	for _, e := range st.Explanations {
		if want := e.Requirement != "individual.political_exposure"; e.Grounded != want || e.Shown != want {
			t.Fatalf("explanation %+v", e)
		}
	}
	s.signal(approval.SignalApproval, approval.SignalOf(sealtest.Seal(t, "alice.support",
		support.Decision{ApprovalID: st.Approval.Pending.ApprovalID, Decision: "approve"})))
	s.waitFor("approved explanation", func(st onboardingflow.Status) bool {
		return st.Approval.Pending == nil && len(st.Decisions) == 1 && st.Explanations[2].Shown
	})

	// 2. The relink URL is revealed from encrypted evidence, never from history.
	link, err := stripetools.RevealLink(ctx, s.store, st.Relink.SnapshotID, st.Relink.URLSHA256, "e2e-test")
	if err != nil || !strings.Contains(link.URL, s.account) {
		t.Fatalf("reveal: %+v %v", link, err)
	}

	// 3. Stripe's webhook, delivered twice, wakes the workflow once.
	if code, status := s.deliver("evt_1E2eFirst" + randomHex(3)); code != 200 || status != webhook.StatusSignalled {
		t.Fatalf("webhook: %d %s", code, status)
	}
	reads := st.StatusReads
	st = s.waitFor("read after the webhook", func(st onboardingflow.Status) bool { return st.StatusReads == reads+1 })
	evt := st.SeenEvents[len(st.SeenEvents)-1]
	if code, status := s.deliver(evt); code != 200 || status != webhook.StatusDuplicate {
		t.Fatalf("redelivery: %d %s", code, status)
	}

	// 4. The merchant opens the Express Dashboard.
	s.signal(onboardingflow.SignalDashboard, nil)
	s.waitFor("login link", func(st onboardingflow.Status) bool { return len(st.Logins) == 1 })

	// 5. The merchant comes back again and again without finishing: the
	// history grows until the run continues as new, state intact.
	for i := 0; i < 30; i++ {
		before := s.status()
		if before.Runs > 1 {
			break
		}
		s.signal(onboardingflow.SignalReturned, onboardingflow.ReturnedSignal{})
		s.waitFor("read after returned", func(st onboardingflow.Status) bool {
			return st.Runs > before.Runs || st.StatusReads > before.StatusReads
		})
	}
	st = s.waitFor("a continued run", func(st onboardingflow.Status) bool { return st.Runs >= 2 })
	if len(st.Logins) != 1 || len(st.Decisions) != 1 || st.Signals.AccountUpdated != 1 || st.Relink == nil {
		t.Fatalf("state lost in continue-as-new: %+v", st)
	}

	// 6. Stripe enables the account and says so: the onboarding ends.
	s.fake.SetAccount(s.account, stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	if code, status := s.deliver("evt_1E2eEnabled" + randomHex(3)); code != 200 || status != webhook.StatusSignalled {
		t.Fatalf("webhook: %d %s", code, status)
	}
	var res onboardingflow.Result
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.State != onboardingflow.StateOnboarded || !res.ChargesEnabled || !res.PayoutsEnabled || res.Runs < 2 {
		t.Fatalf("result %+v", res)
	}

	t.Logf("onboarded after %d runs, %d status reads, %d Stripe requests", res.Runs, res.StatusReads, len(s.fake.Requests("")))
	s.checkAfterwards(ctx)
}

// checkAfterwards audits what the run left behind: idempotency keys,
// evidence without links, logs without links or keys, search attributes.
func (s *onboardingStack) checkAfterwards(ctx context.Context) {
	t := s.t
	keys := map[string]bool{}
	posts := append(s.fake.Requests(stripefake.AccountLink), s.fake.Requests(stripefake.LoginLink)...)
	for _, r := range posts {
		if !strings.HasPrefix(r.IdempotencyKey, "cw-") {
			t.Fatalf("POST %s without our idempotency key", r.Path)
		}
		keys[r.IdempotencyKey] = true
	}
	if len(keys) != len(posts) || len(posts) < 3 {
		t.Fatalf("%d POSTs with %d distinct keys: each step must make its own object", len(posts), len(keys))
	}
	snaps, err := s.store.SnapshotsForWorkflow(ctx, s.wfID)
	if err != nil || len(snaps) < 10 {
		t.Fatalf("snapshots %d err %v", len(snaps), err)
	}
	tools := map[string]int{}
	for _, sn := range snaps {
		tools[sn.Tool]++
		if strings.Contains(string(sn.Output), "connect.stripe.test") {
			t.Fatalf("clear evidence of %s holds a link: %s", sn.Tool, sn.Output)
		}
	}
	for _, tool := range []string{"merchant.get_row", "stripe.get_account_status", "stripe.create_relink_url", "stripe.create_login_link", "knowledge.cite", "support.record_approval"} {
		if tools[tool] == 0 {
			t.Fatalf("no evidence of %s: %v", tool, tools)
		}
	}
	for _, e := range s.logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, "connect.stripe.test") || strings.Contains(line, e2eKey) || strings.Contains(line, e2eSecret) {
			t.Fatalf("log line leaks a secret: %s", line)
		}
	}
	desc, err := s.tc.DescribeWorkflowExecution(ctx, s.wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	fields := desc.WorkflowExecutionInfo.GetSearchAttributes().GetIndexedFields()
	if state := string(fields["CartwrightState"].GetData()); state != `"ONBOARDED"` {
		t.Fatalf("CartwrightState = %s", state)
	}
	if a := string(fields["AwaitingApproval"].GetData()); a != "false" {
		t.Fatalf("AwaitingApproval = %s", a)
	}
}

// TestWebhookStartsOnboarding: the first account.updated for a merchant
// with no onboarding running starts one (signal-with-start on the dev
// server); the same event delivered again starts and signals nothing.
func TestWebhookStartsOnboarding(t *testing.T) {
	s := newOnboardingStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	evt := "evt_1E2eStart" + randomHex(3)
	for i, want := range []string{webhook.StatusSignalled, webhook.StatusDuplicate} {
		if code, status := s.deliver(evt); code != 200 || status != want {
			t.Fatalf("delivery %d: %d %s", i, code, status)
		}
	}
	st := s.waitFor("the started onboarding to read the account", func(st onboardingflow.Status) bool {
		return st.State == onboardingflow.StateAwaitingMerchant
	})
	if st.Signals.AccountUpdated != 1 || st.Runs != 1 || st.SeenEvents[0] != evt {
		t.Fatalf("signals %+v runs %d seen %v", st.Signals, st.Runs, st.SeenEvents)
	}
	desc, err := s.tc.DescribeWorkflowExecution(ctx, s.wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := desc.WorkflowExecutionInfo.GetSearchAttributes().GetIndexedFields(); string(f["CartwrightFlow"].GetData()) != `"onboarding"` {
		t.Fatalf("CartwrightFlow = %s", f["CartwrightFlow"].GetData())
	}
	s.fake.SetAccount(s.account, stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
	if code, status := s.deliver("evt_1E2eDone" + randomHex(3)); code != 200 || status != webhook.StatusSignalled {
		t.Fatalf("%d %s", code, status)
	}
	var res onboardingflow.Result
	if err := s.tc.GetWorkflow(ctx, s.wfID, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.State != onboardingflow.StateOnboarded {
		t.Fatalf("result %+v", res)
	}
}
