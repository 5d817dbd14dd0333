package scaletest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"

	"github.com/jackc/pgx/v5/pgxpool"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/quotesealtest"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

const (
	stripeKey    = "sk_test_51ScaleTestKey0000000000000"
	stripeSecret = "whsec_scaleTestSecret000000000000"
)

// load is how much the test drives: a short run in `make test`, more with
// CARTWRIGHT_SCALE_ORDERS / _ONBOARDINGS / _CONCURRENCY (make test-scale).
type load struct{ orders, onboardings, concurrency int }

func loadFromEnv() load {
	l := load{orders: 24, onboardings: 4, concurrency: 8}
	for name, dst := range map[string]*int{
		"CARTWRIGHT_SCALE_ORDERS": &l.orders, "CARTWRIGHT_SCALE_ONBOARDINGS": &l.onboardings,
		"CARTWRIGHT_SCALE_CONCURRENCY": &l.concurrency,
	} {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			*dst = n
		}
	}
	return l
}

// TestManyWorkersSurviveKills runs three worker processes on one task
// queue — A takes every role but schedules (the schedules are the
// namespace's, shared with every other test on this dev server), B polls
// workflow tasks only and serves the webhook, C polls activity tasks only —
// drives draft orders and onboardings through them, SIGKILLs C and then B
// while orders are in flight, and checks that every workflow completed on
// what was left, with one draft-order row each, evidence chains without
// gaps or duplicates, and a CLEAN audit for every run. Each onboarding's
// Stripe event is posted to A's and B's receivers at once: one signals, the
// other answers duplicate.
func TestManyWorkersSurviveKills(t *testing.T) {
	testenv.Integration(t)
	l := loadFromEnv()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(15*time.Minute))
	defer cancel()

	base := newScaleBase(ctx, t)
	pool, fake, tq := base.pool, base.fake, base.tq
	// A connection per order in flight, within the shared PostgreSQL's
	// 100 that `make test` packages run beside.
	env := workerEnv(tq, base.dsn, fake.URL, max(8, min(24, l.concurrency)))
	a := startWorker(t, "A", "workflows,activities,webhook", env)
	b := startWorker(t, "B", "workflows,webhook", env)
	c := startWorker(t, "C", "activities", env)
	for _, p := range []*proc{a, b, c} {
		p.waitReady(t, 2*time.Minute)
	}

	cl := base.client(ctx, t)

	merchants := seedMerchants(ctx, t, pool, fake, l.onboardings)
	var idleCPU time.Duration
	for _, p := range []*proc{a, b, c} {
		u, _ := p.usage()
		idleCPU += u.CPU
	}
	var killedCPU time.Duration
	began := time.Now()
	onboardingIDs := make([]string, len(merchants))
	for i, m := range merchants {
		h, err := cl.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m.id, Deadline: time.Hour, StatusRetryDelay: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		onboardingIDs[i] = h.WorkflowID
	}

	// The Stripe events, each to two receivers at once, while the
	// onboardings run.
	for _, m := range merchants {
		waitOnboarding(ctx, t, cl, m.id, onboardingflow.StateAwaitingMerchant)
		fake.SetAccount(m.account, stripefake.Account{ChargesEnabled: true, PayoutsEnabled: true})
		evt := "evt_1Scale" + randomHex(6)
		got := deliverBoth(t, evt, m.account, a.webhookAddr, b.webhookAddr)
		if got[webhook.StatusSignalled] != 1 || got[webhook.StatusDuplicate] != 1 {
			t.Fatalf("event %s to two receivers answered %v, want one signalled and one duplicate", evt, got)
		}
	}

	// The orders start now: a draft order takes well under a second, and
	// started before the events above they would all have ended before
	// the first kill. The crashes: C (the only activity worker besides
	// A), then B (a workflow worker holding sticky caches), each with
	// orders in flight.
	orders := driveOrders(ctx, cl, l)
	for _, k := range []struct {
		p     *proc
		after int
	}{{c, l.orders / 3}, {b, 2 * l.orders / 3}} {
		orders.waitDone(ctx, t, k.after)
		if inFlight := orders.started.Load() - orders.done.Load(); inFlight == 0 {
			t.Fatalf("no order in flight when killing %s: raise CARTWRIGHT_SCALE_ORDERS", k.p.name)
		}
		t.Logf("SIGKILL worker %s (%s) with %d orders done, %d in flight", k.p.name, k.p.roles,
			orders.done.Load(), orders.started.Load()-orders.done.Load())
		if u, err := k.p.usage(); err == nil {
			killedCPU += u.CPU
			t.Logf("worker %s at its death: peak RSS %.0f MiB, CPU %s", k.p.name, u.PeakRSSMiB, u.CPU)
		}
		k.p.kill(t)
	}
	orders.wg.Wait()
	elapsed := time.Since(began)
	if err := orders.err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range merchants {
		res, err := cl.WaitOnboarding(ctx, m.id, time.Now().Add(testenv.Deadline(3*time.Minute)))
		if err != nil || res.State != onboardingflow.StateOnboarded {
			t.Fatalf("onboarding %s: %+v %v", m.id, res, err)
		}
		st, err := cl.OnboardingStatus(ctx, m.id)
		if err != nil {
			t.Fatalf("onboarding %s status: %v", m.id, err)
		}
		if st.Signals.AccountUpdated != 1 {
			t.Fatalf("onboarding %s took %d account.updated signals, want 1", m.id, st.Signals.AccountUpdated)
		}
	}
	t.Logf("%d draft orders (%d at a time) and %d onboardings completed in %s across 3 workers, 2 killed",
		l.orders, l.concurrency, len(merchants), elapsed.Round(time.Millisecond))
	if a.exited() {
		t.Fatalf("worker A exited:\n%s", a.tail(4096))
	}
	if u, err := a.usage(); err == nil {
		// CPU the three workers spent on the load, startup excluded: the
		// per-order figure the chart's requests and SCALING.md use.
		cpu := u.CPU + killedCPU - idleCPU
		t.Logf("worker A (survivor): peak RSS %.0f MiB; all workers: %s CPU under load in %s, %.1f ms per draft order (onboardings included)",
			u.PeakRSSMiB, cpu.Round(10*time.Millisecond), elapsed.Round(time.Second), float64(cpu.Milliseconds())/float64(l.orders))
	}

	// One draft-order row per order.
	var rows, keys int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT idempotency_key) FROM draft_orders`).Scan(&rows, &keys); err != nil {
		t.Fatal(err)
	}
	if rows != l.orders || keys != l.orders {
		t.Fatalf("draft_orders: %d rows for %d keys, want %d each", rows, keys, l.orders)
	}
	checkEvidence(ctx, t, pool, cl, append(orders.ids(), onboardingIDs...))
}

// scaleBase is what a test of worker processes starts from: a database of
// its own, a fake Stripe and a task queue of its own.
type scaleBase struct {
	dsn  string
	pool *pgxpool.Pool
	fake *stripefake.Server
	tq   string
}

func newScaleBase(ctx context.Context, t *testing.T) scaleBase {
	t.Helper()
	dsn := testenv.Database(t)
	pool, err := db.Open(ctx, dsn, db.MaxConns(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// Each draft order takes its T-shirts from stock when it is written
	// (docs/quote-seals.md#stock-at-the-write): this database holds enough
	// for any load the tests drive, so none ends OUT_OF_STOCK.
	if _, err := pool.Exec(ctx, `UPDATE catalog_stock SET on_hand = 1000000, reserved = 0 WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	return scaleBase{dsn: dsn, pool: pool, fake: fake, tq: testenv.TaskQueue(t)}
}

// client is a cartwright client on the base's task queue with the
// default options, as a customer's backend has.
func (b scaleBase) client(ctx context.Context, t *testing.T) *client.Client {
	t.Helper()
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	cl, err := client.New(ctx, envOptions(t, b.tq))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// workerEnv is the environment of a worker process on task queue tq and
// database dsn, with Stripe at stripeURL and a pool of conns connections,
// holding the test stacks' evidence and payload keys.
func workerEnv(tq, dsn, stripeURL string, conns int) map[string]string {
	env := map[string]string{
		"TEMPORAL_ADDRESS": testenv.TemporalAddress(), "TEMPORAL_NAMESPACE": "default",
		"CARTWRIGHT_TASK_QUEUE": tq, "CARTWRIGHT_PG_DSN": dsn, "CARTWRIGHT_PG_MAX_CONNS": strconv.Itoa(conns),
		"CARTWRIGHT_EVIDENCE_KEY": evidencetest.Key(), "CARTWRIGHT_EVIDENCE_KEY_ID": evidencetest.KeyID,
		"CARTWRIGHT_PAYLOAD_KEYS": codectest.Spec(), "CARTWRIGHT_SEAL_KEYS": sealtest.Spec(),
		"CARTWRIGHT_QUOTE_SEAL_KEYS":        quotesealtest.Spec(),
		"CARTWRIGHT_WORKER_SIGNING_KEYS":    evidencetest.WorkerSigningRing,
		"CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS": evidencetest.WorkerPublicRing, "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS": evidencetest.GatewayPublicRing,
		"STRIPE_API_BASE": stripeURL, "STRIPE_SECRET_KEY": stripeKey, "STRIPE_WEBHOOK_SECRET": stripeSecret,
		"CARTWRIGHT_LOG_LEVEL": "warn",
	}
	for _, kv := range temporalTLSEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	// An experiment may tune the worker's memory (docs/performance.md#workflow-cache).
	for _, k := range []string{"CARTWRIGHT_WORKFLOW_CACHE_SIZE", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

// temporalTLSEnv is the SDK's TLS settings of the test's environment
// (TEMPORAL_TLS_*, as NAME=value), handed to the processes it starts:
// none on the test stack's dev server, `make cluster`'s client
// certificate on the cluster (docs/operators.md#a-temporal-cluster-make-cluster).
func temporalTLSEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TEMPORAL_TLS") {
			out = append(out, kv)
		}
	}
	return out
}

// checkEvidence: no step with two snapshots (one tool call of one
// activity, local or regular, whatever its attempts: a retried attempt or
// a local activity run again after a lost workflow task reuses the step's
// snapshot), every chain unbroken, every run audits CLEAN (replayed with
// this code, each completed tool activity matched to its one snapshot).
func checkEvidence(ctx context.Context, t *testing.T, p *pgxpool.Pool, cl *client.Client, ids []string) {
	t.Helper()
	var dups int
	if err := p.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM evidence_snapshots WHERE workflow_id <> ''
		GROUP BY workflow_id, run_id, activity_id, tool, input_digest, status = 'error' HAVING count(*) > 1) d`).Scan(&dups); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Fatalf("%d steps have more than one evidence snapshot", dups)
	}
	sealer, err := evidence.NewAESGCMFromBase64(evidencetest.KeyID, evidencetest.Key())
	if err != nil {
		t.Fatal(err)
	}
	store, err := evidence.NewStore(p, sealer, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	// The workers sign their rows with the test process's worker ring
	// (workerEnv); the check verifies with its public half, as an auditor.
	keys, err := evidence.ParseRowKeys(evidencetest.WorkerPublicRing, evidencetest.GatewayPublicRing)
	if err != nil {
		t.Fatal(err)
	}
	store.VerifyWith(keys)
	deps := audit.Deps{Temporal: cl.Temporal(), Evidence: store, Specs: wiring.ToolSpecs()}
	superseded := 0
	for _, id := range ids {
		v, err := store.Verify(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !v.OK || v.Rows == 0 {
			t.Fatalf("chain of %s: %d rows, first problem %+v", id, v.Rows, v.First)
		}
		rep, err := audit.Audit(ctx, deps, audit.ByID(id, ""))
		if err != nil {
			t.Fatalf("audit %s: %v", id, err)
		}
		if !rep.Clean {
			var buf bytes.Buffer
			_ = rep.WriteText(&buf)
			t.Fatalf("audit %s not clean:\n%s", id, buf.String())
		}
		for _, n := range rep.Notes {
			if n.Kind == audit.NoteSupersededAttempt {
				superseded++
			}
		}
	}
	t.Logf("%d runs audited CLEAN; %d snapshots of attempts the kills superseded", len(ids), superseded)
}

// merchant is one onboarding's merchant and Stripe account.
type merchant struct{ id, account string }

// seedMerchants inserts n merchants whose Stripe accounts have grounded
// requirements due (no support-staff review in the way).
func seedMerchants(ctx context.Context, t *testing.T, pool *pgxpool.Pool, fake *stripefake.Server, n int) []merchant {
	t.Helper()
	out := make([]merchant, n)
	for i := range out {
		suffix := randomHex(4)
		m := merchant{id: "m_scale_" + suffix, account: "acct_1CwScale" + suffix}
		testenv.AdminExec(t, pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
			VALUES ($1, $2, 'Scale Test Shop', 'GB', 'company', 'in_progress')`, m.id, m.account)
		fake.SetAccount(m.account, stripefake.Account{
			CurrentlyDue: []string{"external_account", "tos_acceptance.date"}, DisabledReason: "requirements.past_due",
		})
		out[i] = m
	}
	return out
}

func waitOnboarding(ctx context.Context, t *testing.T, cl *client.Client, merchantID, state string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Deadline(2 * time.Minute))
	for {
		st, err := cl.OnboardingStatus(ctx, merchantID)
		if err == nil && st.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("onboarding %s not %s after 2 min: %+v %v", merchantID, state, st.State, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deliverBoth posts one signed account.updated event to both receivers at
// the same moment and counts their answers.
func deliverBoth(t *testing.T, eventID, account string, addrs ...string) map[string]int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"id": eventID, "object": "event", "type": "account.updated", "api_version": "2023-10-16",
		"created": time.Now().Unix(), "account": account, "livemode": false,
		"data": map[string]any{"object": map[string]any{"id": account, "object": "account"}},
	})
	header := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: stripeSecret}).Header
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+webhook.Path, bytes.NewReader(body))
			req.Header.Set("Stripe-Signature", header)
			resp, err := http.DefaultClient.Do(req)
			status := ""
			if err != nil {
				status = "error: " + err.Error()
			} else {
				var ans struct {
					Status string `json:"status"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&ans)
				resp.Body.Close()
				status = ans.Status
				if resp.StatusCode != http.StatusOK {
					status = fmt.Sprintf("http %d %s", resp.StatusCode, ans.Status)
				}
			}
			mu.Lock()
			got[status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// orderRun drives draft orders from a fixed number of goroutines.
type orderRun struct {
	started, done atomic.Int64
	wg            sync.WaitGroup
	mu            sync.Mutex
	firstErr      error
	workflowIDs   []string
}

func (r *orderRun) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstErr == nil {
		r.firstErr = err
	}
}

func (r *orderRun) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

func (r *orderRun) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.workflowIDs...)
}

// waitDone blocks until n orders completed (or one failed).
func (r *orderRun) waitDone(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	for r.done.Load() < int64(n) {
		if err := r.err(); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("waiting for %d orders: %v", n, ctx.Err())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func driveOrders(ctx context.Context, cl *client.Client, l load) *orderRun {
	r := &orderRun{}
	jobs := make(chan int, l.orders)
	for i := 0; i < l.orders; i++ {
		jobs <- i
	}
	close(jobs)
	for g := 0; g < l.concurrency; g++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for range jobs {
				if r.err() != nil {
					return
				}
				r.started.Add(1)
				id, err := driveOrder(ctx, cl, "scale-"+randomHex(8))
				if err != nil {
					r.fail(err)
					return
				}
				r.mu.Lock()
				r.workflowIDs = append(r.workflowIDs, id)
				r.mu.Unlock()
				r.done.Add(1)
			}
		}()
	}
	return r
}

// orderDeadline bounds one order, kills included: a killed activity
// worker costs an attempt's start-to-close timeout, a killed workflow
// worker the sticky queue's schedule-to-start timeout.
const orderDeadline = 3 * time.Minute

// driveOrder plays one user: start, wait for the total, confirm it, wait
// for the draft order. A step that timed out while a worker died is tried
// again (confirming the same hash again is not an error).
func driveOrder(ctx context.Context, cl *client.Client, key string) (string, error) {
	return driveOrderInput(ctx, cl, orderInput(key))
}

// driveOrderInput is driveOrder for any order.
func driveOrderInput(ctx context.Context, cl *client.Client, in draftorder.Input) (string, error) {
	deadline := time.Now().Add(orderDeadline)
	key := in.Request.IdempotencyKey
	var h client.DraftOrderHandle
	if err := retry(deadline, func() (err error) { h, err = cl.StartDraftOrder(ctx, in); return err }); err != nil {
		return "", fmt.Errorf("start %s: %w", key, err)
	}
	// The start answers with the total (Update-with-Start); only a start
	// that attached to a run without it asks for the next action.
	st := h.Status
	if st.Confirmation == nil && st.Result == nil {
		if err := retry(deadline, func() (err error) {
			st, err = cl.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(30*time.Second)))
			return err
		}); err != nil {
			return h.WorkflowID, fmt.Errorf("wait for the total of %s: %w", h.WorkflowID, err)
		}
	}
	if st.Confirmation == nil {
		return h.WorkflowID, fmt.Errorf("%s waits in %s, not for a confirmation", h.WorkflowID, st.State)
	}
	if err := retry(deadline, func() error { return cl.Confirm(ctx, h.WorkflowID, st.Confirmation.QuoteHash) }); err != nil {
		return h.WorkflowID, fmt.Errorf("confirm %s: %w", h.WorkflowID, err)
	}
	var res draftorder.Result
	if err := retry(deadline, func() (err error) {
		res, err = cl.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(30*time.Second)))
		return err
	}); err != nil {
		return h.WorkflowID, fmt.Errorf("result of %s: %w", h.WorkflowID, err)
	}
	if res.State != draftorder.StateDraftCreated || res.DraftOrder == nil {
		return h.WorkflowID, fmt.Errorf("%s ended %s: %s", h.WorkflowID, res.State, res.Message)
	}
	return h.WorkflowID, nil
}

// orderInput is two T-shirts to Berlin: no approval on the way.
func orderInput(key string) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{
			RequestID: "req-" + key, UserID: "u_scale", IdempotencyKey: key, Currency: "EUR",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_scale"}, Client: toolkit.Client{App: "backend", Version: "scaletest"},
		},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	}
}

// retry runs f until it succeeds, fails with an error other than TIMEOUT
// or UPSTREAM_ERROR (what a dying worker looks like to a caller), or the
// deadline passed.
func retry(deadline time.Time, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		code := toolkit.CodeOf(err)
		if (code != toolkit.Timeout && code != toolkit.UpstreamError) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
