package commerce

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/address"
	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The matrix: every destination of the rule data ×
// every shipping service × a basket per catalogue category, through the
// real invoker (input and output schemas, sanitising, evidence), calling
// the tools as the draft order does: pricing, shipping and compliance
// (for the chosen option's transport mode), then duties and taxes and the
// total. Every answer must be an ok envelope or a business refusal; an
// UPSTREAM_ERROR, an INVALID_ARGUMENT or an output-schema failure means our
// own data contradicts itself. The lists come from the rule data and the
// catalogue, so a new country, service or category is tested without
// touching this file.

// businessRefusals are the answers the matrix accepts besides ok.
var businessRefusals = []toolkit.Code{toolkit.AddressInvalid, toolkit.ComplianceBlocked, toolkit.OutOfStock}

// matrixDest is one destination row: a valid quoting address built from
// the address data, and the currency the order is priced in.
type matrixDest struct {
	label    string
	addr     Address
	currency string
	// sanctioned rows must be refused as COMPLIANCE_BLOCKED by every tool.
	sanctioned bool
}

// matrixDestinations derives the rows from the rule data: every tax
// destination (postal code: the address data's example; region: the first
// one that postcode belongs to where a region is required) and every
// destination-level compliance rule (sanctioned countries and regions,
// without a postal code: sanctions come before address checks).
func matrixDestinations(t testing.TB) []matrixDest {
	t.Helper()
	var out []matrixDest
	for _, cc := range tax.SupportedDestinations() {
		a := Address{Country: cc, PostalCode: address.Example(cc)}
		if address.RequiresRegion(cc) {
			rs := address.RegionsFor(cc, a.PostalCode)
			if len(rs) == 0 {
				t.Fatalf("%s: the example postcode belongs to no region", cc)
			}
			a.Region = rs[0]
		}
		label := cc
		if a.Region != "" {
			label += "-" + a.Region
		}
		out = append(out, matrixDest{label: label, addr: a, currency: tax.Currency(cc)})
	}
	for _, d := range compliance.SanctionedDestinations() {
		r, err := compliance.CheckDestination(d)
		if err != nil {
			t.Fatal(err)
		}
		label := d.Country
		if d.Region != "" {
			label += "/" + d.Region
		}
		out = append(out, matrixDest{label: label, addr: Address{Country: d.Country, Region: d.Region}, currency: "EUR",
			sanctioned: r.Verdict == compliance.Block})
	}
	return out
}

// matrixBaskets is one basket per catalogue category: its first SKU (by
// SKU) in stock at the warehouse, quantity 1. A category the warehouse
// does not stock has no basket from it.
func matrixBaskets(cat map[string]Product, warehouse string) map[string]LineItem {
	skus := make([]string, 0, len(cat))
	for s := range cat {
		skus = append(skus, s)
	}
	sort.Strings(skus)
	out := map[string]LineItem{}
	for _, s := range skus {
		p := cat[s]
		if _, ok := out[p.Category]; !ok && p.AvailableAt(warehouse) > 0 {
			out[p.Category] = LineItem{SKU: s, Quantity: 1}
		}
	}
	return out
}

// matrixWorkers is how many destinations run at once: evidence writes
// wait on PostgreSQL commits more than on the CPU.
const matrixWorkers = 12

// matrixRun calls the tools and checks every answer.
type matrixRun struct {
	t   *testing.T
	inv *toolkit.Invoker
	// evidence looks a snapshot id up, when the test can.
	evidence func(id string) (toolkit.Snapshot, bool)
	seq      int64
	mu       sync.Mutex
	// tally counts outcomes per destination label and service.
	tally map[string]map[string]map[string]int
	// origin is the warehouse every call ships from.
	origin string
	// verdicts caches compliance per destination, category and mode (the
	// economy and standard services usually share a mode).
	verdicts map[string]complianceAnswer
}

type complianceAnswer struct {
	outcome string
	verdict ComplianceVerdict
}

func (m *matrixRun) request() toolkit.Request {
	m.mu.Lock()
	m.seq++
	n := m.seq
	m.mu.Unlock()
	return toolkit.Request{RequestID: fmt.Sprintf("req-matrix-%d", n), Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "matrix"},
		UserID: "u_matrix", CorrelationID: fmt.Sprintf("corr-%016x", 0xa000000000000000+uint64(n))}
}

// call invokes a tool and returns its outcome: "ok" with data decoded into
// out, or the refusal's code. Anything outside the business refusals fails
// the test, naming the case.
func (m *matrixRun) call(ctx context.Context, what, tool string, in, out any) string {
	resp, err := m.inv.Invoke(ctx, tool, m.request(), in)
	if err != nil {
		te := toolkit.AsError(err)
		if !slices.Contains(businessRefusals, te.Code) {
			m.t.Errorf("%s: %s answered %s: %s (details %v)", what, tool, te.Code, te.Message, te.Details)
		}
		return outcomeOf(te.Code)
	}
	if !resp.OK || resp.Status == toolkit.StatusError {
		m.t.Errorf("%s: %s: success without an ok envelope: %+v", what, tool, resp)
	}
	if err := resp.Decode(out); err != nil {
		m.t.Errorf("%s: %s: decode: %v", what, tool, err)
	}
	if id := resp.SnapshotID(); id == "" {
		m.t.Errorf("%s: %s: ok answer without evidence", what, tool)
	} else if m.evidence != nil {
		if s, ok := m.evidence(id); !ok || s.Tool != tool {
			m.t.Errorf("%s: %s: snapshot %s not recorded for the tool", what, tool, id)
		}
	}
	return "ok"
}

// outcomeOf names a refusal in the summary.
func outcomeOf(c toolkit.Code) string {
	if c == toolkit.ComplianceBlocked {
		return "blocked"
	}
	return strings.ToLower(string(c))
}

func (m *matrixRun) count(dest, service, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tally[dest] == nil {
		m.tally[dest] = map[string]map[string]int{}
	}
	if m.tally[dest][service] == nil {
		m.tally[dest][service] = map[string]int{}
	}
	m.tally[dest][service][outcome]++
}

// runMatrix drives every origin (warehouse) × destination × service ×
// category basket.
func runMatrix(t *testing.T, inv *toolkit.Invoker, cat map[string]Product, ev func(string) (toolkit.Snapshot, bool)) {
	origins := shipping.Origins()
	if len(origins) < 3 {
		t.Fatalf("origins %v", origins)
	}
	for _, origin := range origins {
		t.Run("from_"+origin, func(t *testing.T) { runMatrixFrom(t, inv, cat, ev, origin) })
	}
}

// runMatrixFrom drives every destination × service × category basket from
// one warehouse.
func runMatrixFrom(t *testing.T, inv *toolkit.Invoker, cat map[string]Product, ev func(string) (toolkit.Snapshot, bool), origin string) {
	ctx := context.Background()
	m := &matrixRun{t: t, inv: inv, evidence: ev, tally: map[string]map[string]map[string]int{}, origin: origin,
		verdicts: map[string]complianceAnswer{}}
	dests := matrixDestinations(t)
	baskets := matrixBaskets(cat, origin)
	services := shipping.Services()
	if len(dests) < 40 || len(baskets) < 12 || len(services) < 3 {
		t.Fatalf("matrix too small from %s: %d destinations, %d baskets, %d services", origin, len(dests), len(baskets), len(services))
	}
	categories := make([]string, 0, len(baskets))
	for c := range baskets {
		categories = append(categories, c)
	}
	sort.Strings(categories)

	// Pricing does not depend on the destination: one quote per currency
	// and category, shared by the rows.
	var qmu sync.Mutex
	quotes := map[string]*Quote{}
	quoteFor := func(cur, category string) (*Quote, string) {
		key := cur + "/" + category
		qmu.Lock()
		q, ok := quotes[key]
		qmu.Unlock()
		if ok {
			if q == nil {
				return nil, "refused"
			}
			return q, "ok"
		}
		var got Quote
		outcome := m.call(ctx, key, ToolGetQuote, GetQuoteArgs{Items: []LineItem{baskets[category]}, Currency: cur, ShipFrom: origin}, &got)
		qmu.Lock()
		defer qmu.Unlock()
		if outcome != "ok" {
			quotes[key] = nil
			return nil, outcome
		}
		quotes[key] = &got
		return &got, "ok"
	}

	row := func(d matrixDest) {
		for ci, category := range categories {
			// Sanctions are refused before the items are read, so one
			// basket stands for every category there.
			if d.sanctioned && ci > 0 {
				for _, s := range services {
					m.count(d.label, s, "blocked")
				}
				continue
			}
			items := []LineItem{baskets[category]}
			what := fmt.Sprintf("%s→%s %s (%s)", origin, d.label, category, items[0].SKU)
			q, qo := quoteFor(d.currency, category)
			var sq ShippingQuote
			so := m.call(ctx, what, ToolQuoteShipping, QuoteShippingArgs{Items: items, Destination: d.addr, Currency: d.currency, ShipFrom: origin}, &sq)
			if so == "ok" && sq.ShipFrom != origin {
				t.Errorf("%s: shipping quoted from %q", what, sq.ShipFrom)
			}
			if d.sanctioned {
				var v ComplianceVerdict
				co := m.call(ctx, what, ToolCheckCompliance, CheckComplianceArgs{Items: items, Destination: d.addr}, &v)
				var dt DutiesAndTaxes
				do := "skipped"
				if q != nil {
					do = m.call(ctx, what, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: ShippingOption{
						OptionID: "standard", ServiceLevel: "standard", Carrier: "x", Cost: Money{Amount: 1000, Currency: d.currency},
						MinDays: 1, MaxDays: 2, ChargeableGrams: 1000, Zone: "ROW", TransportMode: "air"},
						Destination: d.addr, Currency: d.currency, Incoterm: IncotermDDP}, &dt)
				}
				for _, o := range []string{so, co, do} {
					if o != "blocked" && o != "skipped" {
						t.Errorf("%s: sanctioned destination answered %s (shipping %s, compliance %s, duties %s), want COMPLIANCE_BLOCKED from every tool", what, o, so, co, do)
						break
					}
				}
				for _, s := range services {
					m.count(d.label, s, "blocked")
				}
				continue
			}
			// Both incoterms are covered: DDP for every other category,
			// DAP for the rest.
			incoterm := IncotermDDP
			if slices.Index(categories, category)%2 == 1 {
				incoterm = IncotermDAP
			}
			for _, service := range services {
				outcome := m.option(ctx, what+" "+service, d, category, items, q, qo, sq, so, service, incoterm)
				m.count(d.label, service, outcome)
			}
		}
	}

	work := make(chan matrixDest)
	var wg sync.WaitGroup
	for range matrixWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				row(d)
			}
		}()
	}
	for _, d := range dests {
		work <- d
	}
	close(work)
	wg.Wait()
	m.summary(dests, services, len(categories))
}

// option runs compliance (for the option's mode), duties and the total
// for one service, and returns the case's outcome: ok, review (staff
// approval first), blocked, no_service, or the refusal's code.
func (m *matrixRun) option(ctx context.Context, what string, d matrixDest, category string, items []LineItem, q *Quote, qo string,
	sq ShippingQuote, so, service, incoterm string) string {
	if qo != "ok" {
		return qo
	}
	if so != "ok" {
		return so
	}
	var opt *ShippingOption
	for i := range sq.Options {
		if sq.Options[i].ServiceLevel == service {
			opt = &sq.Options[i]
		}
	}
	if opt == nil {
		return "no_service"
	}
	key := d.label + "/" + category + "/" + opt.TransportMode
	m.mu.Lock()
	ca, ok := m.verdicts[key]
	m.mu.Unlock()
	if !ok {
		ca.outcome = m.call(ctx, what, ToolCheckCompliance, CheckComplianceArgs{Items: items, Destination: d.addr, TransportMode: opt.TransportMode}, &ca.verdict)
		m.mu.Lock()
		m.verdicts[key] = ca
		m.mu.Unlock()
	}
	co, v := ca.outcome, ca.verdict
	if co != "ok" {
		return co
	}
	if v.TransportMode != opt.TransportMode {
		m.t.Errorf("%s: compliance answered for %s, the option ships by %s", what, v.TransportMode, opt.TransportMode)
	}
	var dt DutiesAndTaxes
	if o := m.call(ctx, what, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: *opt, Destination: d.addr,
		Currency: d.currency, Incoterm: incoterm}, &dt); o != "ok" {
		return o
	}
	if dt.ShipFrom != m.origin {
		m.t.Errorf("%s: duties estimated from %q", what, dt.ShipFrom)
	}
	if dt.Scheme != "" && !slices.Contains(tax.Schemes(), dt.Scheme) {
		m.t.Errorf("%s: scheme %q is not one of the data's", what, dt.Scheme)
	}
	tot, err := ComputeTotal(TotalParts{Quote: *q, Shipping: *opt, Duties: dt})
	if err != nil {
		m.t.Errorf("%s: total: %v", what, err)
		return "error"
	}
	if tot.GrandTotal.Amount != q.Subtotal.Amount+opt.Cost.Amount+dt.ChargedAtCheckout.Amount || tot.DueOnDelivery != dt.PayableOnDelivery ||
		tot.ShipFrom != m.origin {
		m.t.Errorf("%s: total does not add up: %+v", what, tot)
	}
	if v.Verdict == VerdictUncertain || v.Confidence < compliance.ApprovalThreshold {
		return "review"
	}
	return "ok"
}

// summary logs one line per destination: outcomes per service.
func (m *matrixRun) summary(dests []matrixDest, services []string, categories int) {
	totals := map[string]int{}
	m.t.Logf("matrix from %s: %d destinations × %d services × %d category baskets (outcomes per service)", m.origin, len(dests), len(services), categories)
	for _, d := range dests {
		var cells []string
		for _, s := range services {
			c := m.tally[d.label][s]
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
				totals[k] += c[k]
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
			}
			cells = append(cells, fmt.Sprintf("%-8s %-34s", s, strings.Join(parts, " ")))
		}
		m.t.Logf("%-10s %s", d.label, strings.Join(cells, " | "))
	}
	keys := make([]string, 0, len(totals))
	for k := range totals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, totals[k]))
	}
	m.t.Logf("matrix totals from %s: %s", m.origin, strings.Join(parts, " "))
	if totals["ok"] == 0 {
		m.t.Error("no case of the matrix ended ok")
	}
}

// TestMatrixThroughInvoker runs the matrix on the real stack: catalogue
// and evidence store in PostgreSQL.
func TestMatrixThroughInvoker(t *testing.T) {
	// A pool as wide as the matrix's workers (the default is 4 connections).
	pool, err := db.Open(context.Background(), testenv.Database(t), db.MaxConns(matrixWorkers+2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store, cipher := evidencetest.Store(t, pool, nil)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, ToolDeps{Pool: pool, Audit: store, Sealer: cipher, Unsealed: true, Clock: func() time.Time { return at }}); err != nil {
		t.Fatal(err)
	}
	inv := toolkit.NewInvoker(reg, store, nil)
	skus := []string{}
	rows, err := pool.Query(context.Background(), `SELECT sku FROM catalog_products WHERE active ORDER BY sku`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		skus = append(skus, s)
	}
	rows.Close()
	cat, err := PGCatalog{Pool: pool}.Products(context.Background(), skus)
	if err != nil {
		t.Fatal(err)
	}
	runMatrix(t, inv, cat, nil)
}

// TestMatrixThroughInvokerInMemory is the same matrix without PostgreSQL
// (make test-unit): the seed catalogue in memory, evidence recorded in
// memory, the same registry, schemas, sanitising and invoker.
func TestMatrixThroughInvokerInMemory(t *testing.T) {
	if !testing.Short() {
		t.Skip("the full run has TestMatrixThroughInvoker on PostgreSQL; this variant is for go test -short")
	}
	inv, cat, ev := newMemEnv(t)
	runMatrix(t, inv, cat, ev.get)
}
