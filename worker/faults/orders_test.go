package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

const userID = "u_faults"

// order is a draft order of two T-shirts to Berlin under key.
func order(key string) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{UserID: userID, IdempotencyKey: key, Currency: "EUR",
			Actor:  toolkit.Actor{Type: toolkit.ActorUser, ID: userID},
			Client: toolkit.Client{App: "backend", Version: "faults"}},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	}
}

// keys returns n fresh idempotency keys for scenario.
func keys(scenario string, n int) []string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%s-%03d", scenario, hex.EncodeToString(b), i)
	}
	return out
}

func draftID(key string) string {
	id, _ := workflows.DraftOrderID(userID, key)
	return id
}

// outcome is how one order ended for the backend that drove it.
type outcome struct {
	key string
	res *draftorder.Result
	err error
	// at is when the backend saw the order end.
	at time.Time
}

// drive runs one order to its end as a patient backend would: start,
// confirm the published total (again if the price changed), read the
// result; every call is retried while the stack is down. afterConfirm runs
// once the confirm was sent (the draft-order write is then under way).
func (s *stack) drive(ctx context.Context, key string, afterConfirm func()) outcome {
	return s.driveOrder(ctx, order(key), afterConfirm)
}

// driveOrder is drive for an order of the caller's.
func (s *stack) driveOrder(ctx context.Context, in draftorder.Input, afterConfirm func()) outcome {
	key := in.Request.IdempotencyKey
	id := draftID(key)
	for {
		_, err := s.client.StartDraftOrder(ctx, in)
		if err == nil {
			break
		}
		if ctx.Err() != nil || !toolkit.CodeOf(err).Retryable() {
			return outcome{key: key, err: fmt.Errorf("start: %w", err)}
		}
		time.Sleep(500 * time.Millisecond)
	}
	confirmed := ""
	for {
		if ctx.Err() != nil {
			return outcome{key: key, err: fmt.Errorf("no result before the scenario's deadline")}
		}
		st, err := s.client.Status(ctx, id)
		if errors.Is(err, client.ErrRunEnded) {
			return outcome{key: key, err: err}
		}
		if err == nil {
			if st.Result != nil {
				return outcome{key: key, res: st.Result}
			}
			if c := st.Confirmation; c != nil && c.QuoteHash != confirmed && st.State != draftorder.StateCreating {
				if s.client.Confirm(ctx, id, c.QuoteHash) == nil {
					confirmed = c.QuoteHash
					if afterConfirm != nil {
						afterConfirm()
					}
				}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// driveAll drives the orders of keys, at most inFlight at a time.
func (s *stack) driveAll(ctx context.Context, ks []string, inFlight int, afterConfirm func(i int)) []outcome {
	out := make([]outcome, len(ks))
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var after func()
			if afterConfirm != nil {
				after = func() { afterConfirm(i) }
			}
			out[i] = s.drive(ctx, k, after)
			out[i].at = time.Now()
		}()
		time.Sleep(50 * time.Millisecond) // a stream of orders, not one burst
	}
	wg.Wait()
	return out
}

// row is one line of the matrix table.
type row struct {
	scenario   string
	orders     int
	completed  int
	failed     int
	duplicates int
	gaps       int
	findings   int
	note       string
}

// measure checks what the orders of ks left behind: their results, the
// draft_orders rows (exactly one per completed order), every run's
// evidence chain and the snapshots its result names, and a full audit.
func (s *stack) measure(ctx context.Context, name string, outs []outcome, note string) row {
	r := row{scenario: name, orders: len(outs), note: note}
	why := map[string]int{}
	var ks []string
	for _, o := range outs {
		ks = append(ks, o.key)
		switch {
		case o.err != nil:
			r.failed++
			why[short(o.err.Error())]++
		case o.res.State != draftorder.StateDraftCreated:
			r.failed++
			why[o.res.State+" "+string(o.res.Code)+": "+short(o.res.Message)]++
		default:
			r.completed++
		}
	}
	rows := map[string]int{}
	res, err := s.pool.Query(ctx, `SELECT idempotency_key, count(*) FROM draft_orders WHERE idempotency_key = ANY($1) GROUP BY 1`, ks)
	if err != nil {
		s.t.Fatalf("%s: count rows: %v", name, err)
	}
	for res.Next() {
		var k string
		var n int
		_ = res.Scan(&k, &n)
		rows[k] = n
	}
	res.Close()
	var problems []string
	for _, o := range outs {
		if n := rows[o.key]; n > 1 {
			r.duplicates += n - 1
		}
		if o.res != nil && o.res.State == draftorder.StateDraftCreated && rows[o.key] == 0 {
			r.gaps++
			problems = append(problems, o.key+": completed without a draft_orders row")
		}
		id := draftID(o.key)
		g, f, p := s.check(ctx, id, o.res)
		r.gaps += g
		r.findings += f
		problems = append(problems, p...)
	}
	if len(why) > 0 {
		r.note = joinNote(r.note, "ended: "+counted(why))
	}
	for _, p := range problems {
		s.t.Logf("%s: %s", name, p)
	}
	if len(problems) > 0 {
		r.note = joinNote(r.note, "first problem: "+short(problems[0]))
	}
	return r
}

// check verifies one run's evidence chain and the snapshots its result
// names (gaps), and audits it (findings).
func (s *stack) check(ctx context.Context, id string, res *draftorder.Result) (gaps, findings int, problems []string) {
	v, err := s.deps.Evidence.Verify(ctx, id)
	if err != nil {
		return 1, 0, []string{id + ": verify: " + err.Error()}
	}
	for _, p := range v.Problems {
		gaps++
		problems = append(problems, fmt.Sprintf("%s: chain: %s at %d: %s", id, p.Kind, p.ChainSeq, p.Detail))
	}
	if res != nil {
		var ids []string
		for _, e := range res.Evidence {
			ids = append(ids, e.SnapshotID)
		}
		missing, err := evidence.MissingSnapshots(ctx, s.pool, ids)
		if err != nil {
			return gaps + 1, 0, append(problems, id+": missing snapshots: "+err.Error())
		}
		gaps += len(missing)
		for _, m := range missing {
			problems = append(problems, id+": result names missing snapshot "+m)
		}
	}
	rep, err := audit.Audit(ctx, s.deps, audit.ByID(id, ""))
	if err != nil {
		return gaps, 1, append(problems, id+": audit could not run: "+err.Error())
	}
	for _, f := range rep.Findings {
		findings++
		problems = append(problems, id+": audit: "+f.String())
	}
	return gaps, findings, problems
}

// auditKinds is the distinct finding kinds of an audit of id.
func (s *stack) auditKinds(ctx context.Context, id string) (int, []string) {
	rep, err := audit.Audit(ctx, s.deps, audit.ByID(id, ""))
	if err != nil {
		return 1, []string{"audit error: " + short(err.Error())}
	}
	kinds := map[string]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind]++
	}
	return len(rep.Findings), sortedKeys(kinds)
}

func short(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 110 {
		return s[:110] + "…"
	}
	return s
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func counted(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%d× %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
