package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// sizes are the matrix's knobs: FAULTS=short (CI, a few minutes) or long.
type sizes struct {
	killOrders, kills int
	temporalOrders    int
	temporalKills     int
	pgOrders          int
	pgOutages         []time.Duration
	onboardings       int
	payments          int
}

func matrixSizes() (string, sizes) {
	if os.Getenv("FAULTS") == "long" {
		return "long", sizes{killOrders: 40, kills: 12, temporalOrders: 12, temporalKills: 2,
			pgOrders: 10, pgOutages: []time.Duration{60 * time.Second, 5 * time.Minute}, onboardings: 3, payments: 12}
	}
	return "short", sizes{killOrders: 12, kills: 4, temporalOrders: 6, temporalKills: 1,
		pgOrders: 6, pgOutages: []time.Duration{20 * time.Second}, onboardings: 2, payments: 4}
}

// TestFaultMatrix is the fault matrix (docs/testing.md#fault-matrix-make-test-faults). Every scenario adds one row; the
// test fails if any order is lost or duplicated, any evidence is missing,
// an audit finds anything where nothing was tampered with, or a tampering
// goes unnoticed.
func TestFaultMatrix(t *testing.T) {
	testenv.Integration(t)
	if os.Getenv("FAULTS") == "" {
		t.Skip("fault matrix: run it with make test-faults (FAULTS=short or long)")
	}
	form, sz := matrixSizes()
	s := newStack(t)
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		t.Logf("%s: %d orders, %d completed, %d failed, %d duplicate rows, %d evidence gaps, %d audit findings — %s",
			r.scenario, r.orders, r.completed, r.failed, r.duplicates, r.gaps, r.findings, r.note)
	}
	defer func() { printTable(t, form, rows) }()

	add(s.baseline(t))
	add(s.workerKills(t, sz))
	add(s.temporalKills(t, sz))
	for _, d := range sz.pgOutages {
		add(s.postgresOutage(t, sz.pgOrders, d))
	}
	add(s.stripeFaults(t, sz.onboardings))
	add(s.payments(t, sz.payments))
	add(s.duplicateStarts(t))
	add(s.badSignals(t))
	reuse, strict := s.keyReuse(t)
	add(reuse)
	for _, r := range s.tampering(t) {
		add(r)
	}

	for _, r := range rows {
		tamper := strings.HasPrefix(r.scenario, "tamper")
		switch {
		case r.scenario == reuse.scenario && !strict:
			t.Logf("%s: not checked (%s)", r.scenario, r.note)
		case r.failed > 0 || r.completed != r.orders:
			t.Errorf("%s: %d of %d orders did not complete: %s", r.scenario, r.orders-r.completed, r.orders, r.note)
		case r.duplicates > 0:
			t.Errorf("%s: %d duplicate rows", r.scenario, r.duplicates)
		case !tamper && (r.gaps > 0 || r.findings > 0):
			t.Errorf("%s: %d evidence gaps, %d audit findings with nothing tampered: %s", r.scenario, r.gaps, r.findings, r.note)
		case tamper && r.findings == 0:
			t.Errorf("%s: the tampering went unnoticed", r.scenario)
		}
	}
}

func printTable(t *testing.T, form string, rows []row) {
	var b strings.Builder
	fmt.Fprintf(&b, "fault matrix (%s form)\n", form)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "| scenario\t| orders\t| completed\t| failed\t| duplicate rows\t| evidence gaps\t| audit findings\t| notes\t|")
	fmt.Fprintln(w, "|---\t|---\t|---\t|---\t|---\t|---\t|---\t|---\t|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s\t| %d\t| %d\t| %d\t| %d\t| %d\t| %d\t| %s\t|\n", r.scenario, r.orders, r.completed, r.failed, r.duplicates, r.gaps, r.findings, r.note)
	}
	_ = w.Flush()
	fmt.Print("\n" + b.String() + "\n")
	if p := os.Getenv("FAULTS_TABLE"); p != "" {
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
}

func scenarioCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(d))
	t.Cleanup(cancel)
	return ctx
}

// baseline: orders with nothing broken, the yardstick of the others.
func (s *stack) baseline(t *testing.T) row {
	ctx := scenarioCtx(t, 3*time.Minute)
	outs := s.driveAll(ctx, keys("base", 4), 4, nil)
	return s.measure(ctx, "baseline (no faults)", outs, "")
}

// workerKills SIGKILLs worker processes at random points while orders run,
// some right after a confirm (during the draft-order write).
func (s *stack) workerKills(t *testing.T, sz sizes) row {
	ctx := scenarioCtx(t, 12*time.Minute)
	var kills, duringWrite atomic.Int64
	var killMu sync.Mutex // one kill at a time: both workers never down at once
	killOne := func(write bool) {
		// A kill meant for a write waits briefly for the previous one.
		for start := time.Now(); !killMu.TryLock(); time.Sleep(20 * time.Millisecond) {
			if !write || time.Since(start) > 400*time.Millisecond {
				return
			}
		}
		defer killMu.Unlock()
		if kills.Load() >= int64(sz.kills) {
			return
		}
		kills.Add(1)
		if write {
			duringWrite.Add(1)
		}
		s.killWorker(rand.IntN(2), time.Duration(200+rand.IntN(800))*time.Millisecond)
	}
	done := make(chan struct{})
	go func() { // random kills, one every 1–3 s
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(1000+rand.IntN(2000)) * time.Millisecond):
				// Leave room for the kills during the write.
				if kills.Load() < int64(sz.kills)-int64(sz.kills)/3 {
					killOne(false)
				}
			}
		}
	}()
	// Few orders in flight, so the scenario lasts long enough for every kill.
	outs := s.driveAll(ctx, keys("kill", sz.killOrders), 4, func(i int) {
		if i%2 == 0 {
			go func() {
				time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
				killOne(true)
			}()
		}
	})
	close(done)
	return s.measure(ctx, "worker SIGKILL", outs, fmt.Sprintf("%d kills, %d right after a confirm (draft-order write)", kills.Load(), duringWrite.Load()))
}

// temporalKills SIGKILLs the dev server mid-run and restarts it on its
// state file: half the orders are quoted before the first kill, so that
// their confirmation and write meet the dead server; the rest start around
// the kills. Every order must end after the first kill (orders take well
// under a second: one that ended before it would have tested nothing).
func (s *stack) temporalKills(t *testing.T, sz sizes) row {
	ctx := scenarioCtx(t, 10*time.Minute)
	ks := keys("temporal", sz.temporalOrders)
	s.quote(ctx, t, ks[:len(ks)/2])
	firstKill := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < sz.temporalKills; i++ {
			if i > 0 {
				time.Sleep(time.Duration(1500+rand.IntN(2500)) * time.Millisecond)
			}
			s.killTemporal(2 * time.Second)
		}
	}()
	outs := s.driveAll(ctx, ks, sz.temporalOrders, nil)
	<-done
	after := endedAfter(outs, firstKill)
	r := s.measure(ctx, "Temporal dev server SIGKILL + restart", outs,
		fmt.Sprintf("%d kill(s), restarted on its state file; %d of %d orders ended after the first", sz.temporalKills, after, len(ks)))
	if after != len(ks) {
		r.failed += len(ks) - after
	}
	return r
}

// postgresOutage stops the private cluster for d while orders are in each
// phase an outage can meet: half were quoted before it and are confirmed
// during it (their write meets the database down and hands over to its
// regular activity), half start during it (their quoting waits it out).
// Every order must end after the database came back: one that ended before
// the stop would have tested nothing (orders take well under a second).
func (s *stack) postgresOutage(t *testing.T, n int, d time.Duration) row {
	ctx := scenarioCtx(t, d+10*time.Minute)
	ks := keys("pg", n)
	s.quote(ctx, t, ks[:n/2])
	s.pg.Stop()
	var back time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(d)
		s.pg.Start()
		back = time.Now()
	}()
	outs := s.driveAll(ctx, ks, n, nil)
	<-done
	after := endedAfter(outs, back)
	r := s.measure(ctx, fmt.Sprintf("PostgreSQL stopped %s", d), outs,
		fmt.Sprintf("%d quoted before and confirmed during it, %d started during it; %d of %d ended after PostgreSQL came back",
			n/2, n-n/2, after, n))
	if after != n {
		r.failed += n - after
		r.note += " — orders that ended during the outage did not wait for the database"
	}
	return r
}

// quote starts the orders of ks and waits for their published totals,
// before a fault.
func (s *stack) quote(ctx context.Context, t *testing.T, ks []string) {
	t.Helper()
	for _, k := range ks {
		if _, err := s.client.StartDraftOrder(ctx, order(k)); err != nil {
			t.Fatalf("quote %s before the fault: %v", k, err)
		}
	}
}

// endedAfter counts the orders that ended after t0.
func endedAfter(outs []outcome, t0 time.Time) int {
	n := 0
	for _, o := range outs {
		if o.at.After(t0) {
			n++
		}
	}
	return n
}

// stripeFaults runs onboardings through the proxy while it injects 5xx,
// 429 with Retry-After, timeouts and connection resets into every other
// Stripe request; the account turns complete halfway.
func (s *stack) stripeFaults(t *testing.T, n int) row {
	ctx := scenarioCtx(t, 6*time.Minute)
	r := row{scenario: "Stripe 5xx/429/timeout/reset (onboarding)", orders: n}
	s.proxy.setComplete(false)
	s.proxy.arm(true)
	defer s.proxy.arm(false)
	merchants := s.startOnboardings(ctx, t, "m", n)
	// Let the faults bite while requirements are due: the merchants come
	// back asking for new links (each a Stripe call past the cache) until
	// every kind of fault was injected; then the account is complete and
	// they come back for good.
	for deadline := time.Now().Add(testenv.Deadline(2 * time.Minute)); time.Now().Before(deadline); {
		if injected, _ := s.proxy.counts(); len(injected) == len(faultCycle) {
			break
		}
		time.Sleep(3 * time.Second)
		for _, m := range merchants {
			_ = s.client.Returned(ctx, m, true)
		}
	}
	codes := s.finishOnboardings(ctx, &r, merchants)
	injected, passed := s.proxy.counts()
	r.note = joinNote(fmt.Sprintf("injected %s (%d passed); activity failures by code: %s",
		counted(injected), passed, counted(codes)), r.note)
	if injected[fault5xx] == 0 || injected[fault429] == 0 || injected[faultTimeout] == 0 || injected[faultReset] == 0 {
		t.Errorf("stripe faults: not every kind was injected: %v", injected)
	}
	return r
}

// startOnboardings seeds n merchants whose Stripe accounts have
// requirements due (the proxy's account reads, until setComplete) and
// starts their onboardings.
func (s *stack) startOnboardings(ctx context.Context, t *testing.T, prefix string, n int) []string {
	t.Helper()
	var merchants []string
	for i, k := range keys(prefix, n) {
		m := "m_faults_" + strings.ToLower(strings.ReplaceAll(k, "-", "_"))
		acct := fmt.Sprintf("acct_1Faults%s%d", strings.ReplaceAll(k[len(prefix)+1:len(prefix)+9], "-", ""), i)
		if _, err := s.pool.Exec(ctx, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
			VALUES ($1, $2, 'Fault Shop', 'GB', 'company', 'in_progress')`, m, acct); err != nil {
			t.Fatal(err)
		}
		if _, err := s.client.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m, StatusRetryDelay: 2 * time.Second,
			Deadline: time.Hour, ApprovalWindow: time.Hour}); err != nil {
			t.Fatalf("start onboarding: %v", err)
		}
		merchants = append(merchants, m)
	}
	return merchants
}

// finishOnboardings completes the merchants' Stripe accounts, brings the
// merchants back until each onboarding hears it, and adds every run's end,
// evidence chain and audit to r; it returns the failed activity attempts
// by error code.
func (s *stack) finishOnboardings(ctx context.Context, r *row, merchants []string) map[string]int {
	s.proxy.setComplete(true)
	for _, m := range merchants {
		for ctx.Err() == nil && s.client.Returned(ctx, m, false) != nil {
			time.Sleep(time.Second)
		}
	}
	codes := map[string]int{}
	for _, m := range merchants {
		res, err := s.client.WaitOnboarding(ctx, m, time.Now().Add(testenv.Deadline(4*time.Minute)))
		id, _ := onboardingflow.ID(m)
		switch {
		case err != nil:
			r.failed++
			r.note = joinNote(r.note, short(err.Error()))
		case res.State != onboardingflow.StateOnboarded:
			r.failed++
			r.note = joinNote(r.note, "ended "+res.State)
		default:
			r.completed++
		}
		s.failureCodes(ctx, id, codes)
		v, err := s.deps.Evidence.Verify(ctx, id)
		if err != nil || !v.OK {
			r.gaps += max(1, len(v.Problems))
		}
		f, kinds := s.auditKinds(ctx, id)
		r.findings += f
		if f > 0 {
			r.note = joinNote(r.note, "audit: "+strings.Join(kinds, ","))
		}
	}
	return codes
}

// failureCodes counts the error types of the failed activity attempts in
// a run's history: each retried attempt's start event carries the previous
// attempt's failure, a call that gave up its failed event.
func (s *stack) failureCodes(ctx context.Context, id string, into map[string]int) {
	code := func(f *failurepb.Failure) string {
		for f.GetCause() != nil && f.GetApplicationFailureInfo() == nil {
			f = f.GetCause()
		}
		if t := f.GetApplicationFailureInfo().GetType(); t != "" {
			return t
		}
		if f.GetTimeoutFailureInfo() != nil {
			return "activity timeout"
		}
		return "other"
	}
	it := s.client.Temporal().GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetLastFailure() != nil {
			into[code(a.GetLastFailure())]++
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			into[code(a.GetFailure())+" (gave up)"]++
		}
	}
}

// duplicateStarts: 100 concurrent starts of one key, then 20 concurrent
// confirms of its total: one run, one row.
func (s *stack) duplicateStarts(t *testing.T) row {
	ctx := scenarioCtx(t, 3*time.Minute)
	key := keys("dup", 1)[0]
	id := draftID(key)
	runs, started := map[string]int{}, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.client.StartDraftOrder(ctx, order(key))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				runs["error: "+short(err.Error())]++
				return
			}
			runs[h.RunID]++
			if !h.Attached {
				started++
			}
		}()
	}
	wg.Wait()
	st, err := s.client.WaitForAction(ctx, id, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("duplicate starts: no total to confirm: %v", err)
	}
	var accepted atomic.Int64
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.client.Confirm(ctx, id, st.Confirmation.QuoteHash) == nil {
				accepted.Add(1)
			}
		}()
	}
	wg.Wait()
	res, err := s.client.WaitResult(ctx, id, time.Now().Add(testenv.Deadline(2*time.Minute)))
	r := s.measure(ctx, "100 concurrent starts + 20 concurrent confirms", []outcome{{key: key, res: &res, err: err}},
		fmt.Sprintf("%d run(s) for 100 starts (%d started, the rest attached); %d of 20 confirm signals sent", len(runs), started, accepted.Load()))
	if len(runs) != 1 || started != 1 {
		r.duplicates += len(runs) - 1
		t.Errorf("duplicate starts: runs %v, %d started", runs, started)
	}
	return r
}

// badSignals sends, with the SDK, a malformed confirm, a stale confirm, an
// unauthorised approval, a malformed cancel and the right confirm twice:
// the order completes once, each bad one is refused and logged.
func (s *stack) badSignals(t *testing.T) row {
	ctx := scenarioCtx(t, 3*time.Minute)
	key := keys("sig", 1)[0]
	id := draftID(key)
	if _, err := s.client.StartDraftOrder(ctx, order(key)); err != nil {
		t.Fatal(err)
	}
	st, err := s.client.WaitForAction(ctx, id, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("bad signals: no total to confirm: %v", err)
	}
	tc := s.client.Temporal()
	send := func(name string, arg any) {
		if err := tc.SignalWorkflow(ctx, id, "", name, arg); err != nil {
			t.Errorf("signal %s: %v", name, err)
		}
	}
	send(draftorder.SignalConfirm, json.RawMessage(`{"quote_hash": 42}`))
	send(draftorder.SignalConfirm, "not an object")
	send(draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: "sha256:" + strings.Repeat("0", 64)})
	send(approval.SignalApproval, approval.Signal{ApprovalID: "apr_00000000deadbeef", Decision: "approve", Approver: "intruder"})
	send(draftorder.SignalCancel, json.RawMessage(`[1,2,3]`))
	send(draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: st.Confirmation.QuoteHash})
	send(draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: st.Confirmation.QuoteHash})
	res, err := s.client.WaitResult(ctx, id, time.Now().Add(testenv.Deadline(2*time.Minute)))
	after, _ := s.client.Status(ctx, id)
	reasons := map[string]int{}
	for _, rj := range after.Rejected.Rejected {
		reasons[rj.Signal+":"+rj.Reason]++
	}
	r := s.measure(ctx, "malformed/stale/duplicate/unauthorised signals", []outcome{{key: key, res: &res, err: err}},
		"refused: "+counted(reasons))
	for _, want := range []string{"confirm:" + workflows.RejectMalformed, "confirm:" + workflows.RejectStaleQuoteHash, "cancel:" + workflows.RejectMalformed} {
		if reasons[want] == 0 {
			t.Errorf("bad signals: no %s refusal in %v", want, reasons)
		}
	}
	var approvals int
	for k := range reasons {
		if strings.HasPrefix(k, approval.SignalApproval+":") {
			approvals++
		}
	}
	if approvals == 0 {
		t.Errorf("bad signals: the unauthorised approval was not refused: %v", reasons)
	}
	return r
}

// tampering runs one clean order per kind of tampering, changes its rows
// as a superuser would, and reports what the audit (and reconcile) named.
func (s *stack) tampering(t *testing.T) []row {
	ctx := scenarioCtx(t, 5*time.Minute)
	kinds := []struct {
		name string
		do   func(id, draft string) error
	}{
		{"tamper: evidence hash", func(id, _ string) error {
			return s.superExec(ctx, `UPDATE evidence_snapshots SET output_hash = 'sha256:'||repeat('0',64)
				WHERE workflow_id = $1 AND tool = 'checkout.compute_total'`, id)
		}},
		{"tamper: evidence output", func(id, _ string) error {
			return s.superExec(ctx, `UPDATE evidence_snapshots SET output = jsonb_set(output, '{grand_total,amount}', '1')
				WHERE workflow_id = $1 AND tool = 'checkout.compute_total'`, id)
		}},
		{"tamper: deleted middle row", func(id, _ string) error {
			return s.superExec(ctx, `DELETE FROM evidence_snapshots WHERE chain_key = $1 AND chain_seq = 3`, id)
		}},
		{"tamper: deleted tail, head patched", func(id, _ string) error {
			if err := s.superExec(ctx, `DELETE FROM evidence_snapshots WHERE chain_key = $1
				AND chain_seq = (SELECT max(chain_seq) FROM evidence_snapshots WHERE chain_key = $1)`, id); err != nil {
				return err
			}
			return s.superExec(ctx, `UPDATE evidence_chain_heads h SET last_seq = s.chain_seq, last_hash = s.chain_hash
				FROM evidence_snapshots s WHERE h.chain_key = $1 AND s.chain_key = $1
				AND s.chain_seq = (SELECT max(chain_seq) FROM evidence_snapshots WHERE chain_key = $1)`, id)
		}},
		{"tamper: forged row", func(id, _ string) error {
			return s.superExec(ctx, `INSERT INTO evidence_snapshots (snapshot_id, dedupe_key, chain_key, chain_seq, tool, tool_version,
					build, workflow_id, run_id, activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash,
					input_digest, output, output_hash, ruleset_version, ttl_seconds, status, created_at, content_hash,
					prev_chain_hash, chain_hash)
				SELECT 'ev_01FAKE' || repeat('0', 19) || 'Z', 'forged-'||snapshot_id, chain_key,
					chain_seq + 1, tool, tool_version, build, workflow_id, run_id, '999', activity_type, attempt, request_id,
					correlation_id, user_id_hash, input_digest, output, output_hash, ruleset_version, ttl_seconds, status,
					created_at, content_hash, chain_hash, chain_hash
				FROM evidence_snapshots WHERE chain_key = $1 ORDER BY chain_seq DESC LIMIT 1`, id)
		}},
		{"tamper: changed business row (draft_orders total = 1)", func(_, draft string) error {
			return s.superExec(ctx, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, draft)
		}},
	}
	ks := keys("tamper", len(kinds))
	outs := s.driveAll(ctx, ks, len(ks), nil)
	var rows []row
	for i, k := range kinds {
		o := outs[i]
		r := s.measure(ctx, k.name, []outcome{o}, "")
		if r.completed != 1 || r.gaps != 0 || r.findings != 0 {
			r.note = joinNote("NOT CLEAN BEFORE TAMPERING", r.note)
			rows = append(rows, r)
			continue
		}
		id := draftID(o.key)
		if err := k.do(id, o.res.DraftOrder.DraftOrderID); err != nil {
			t.Errorf("%s: %v", k.name, err)
		}
		v, _ := s.deps.Evidence.Verify(ctx, id)
		chain := map[string]int{}
		for _, p := range v.Problems {
			chain[p.Kind]++
		}
		r.gaps = len(v.Problems)
		var kindsNamed []string
		r.findings, kindsNamed = s.auditKinds(ctx, id)
		rec, err := evidence.Reconcile(ctx, s.pool, evidence.ReconcileOptions{RowKeys: s.deps.Evidence.RowKeys()})
		recNote := ""
		if err == nil {
			inv := map[string]int{}
			for _, v := range rec.Violations {
				if v.WorkflowID == id {
					inv[v.Invariant]++
				}
			}
			if len(inv) > 0 {
				recNote = "; reconcile: " + counted(inv)
			}
		}
		r.note = "audit names: " + strings.Join(kindsNamed, ", ") + "; chain: " + counted(chain) + recNote
		rows = append(rows, r)
	}
	return rows
}

// superExec runs sql with triggers off, as a superuser tampering with the
// append-only tables would.
func (s *stack) superExec(ctx context.Context, sql string, args ...any) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.Background(), "SET session_replication_role = origin") }()
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// keyReuse: a run terminated while it waits for the user must not hold its
// key forever (docs/backend.md#idempotency-keys): under ALLOW_DUPLICATE_FAILED_ONLY the
// same key starts a new run, which completes with one row; a completed or
// running run still attaches. Until the draft order's start options use
// that policy, the row reports what happens instead and does not fail.
func (s *stack) keyReuse(t *testing.T) (row, bool) {
	ctx := scenarioCtx(t, 3*time.Minute)
	key := keys("reuse", 1)[0]
	id := draftID(key)
	opts, _ := draftorder.StartOptions(taskQueue, order(key))
	strict := opts.WorkflowIDReusePolicy == enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	first, err := s.client.StartDraftOrder(ctx, order(key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.WaitForAction(ctx, id, time.Now().Add(testenv.Deadline(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := s.client.Temporal().TerminateWorkflow(ctx, id, first.RunID, "fault matrix: terminated run"); err != nil {
		t.Fatal(err)
	}
	second, err := s.client.StartDraftOrder(ctx, order(key))
	note := fmt.Sprintf("policy %s; after terminate the same key ", opts.WorkflowIDReusePolicy)
	switch {
	case err != nil:
		note += "was refused: " + short(err.Error())
	case second.RunID != first.RunID && !second.Attached:
		note += "started a new run"
	default:
		note += "attached to the terminated run"
	}
	o := s.drive(ctx, key, nil)
	r := s.measure(ctx, "key reuse after a terminated run", []outcome{o}, note)
	if !strict {
		r.note = joinNote(r.note, "NOT CHECKED: the start options do not use ALLOW_DUPLICATE_FAILED_ONLY yet")
	}
	return r, strict
}
