package scaletest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
)

// benchResult collects a bench run; table prints it.
type benchResult struct {
	floor  map[int][]map[string]floorFigures // by concurrency, one per round
	drafts map[int][]drafts
	// cart: start → draft created, one at a time, by cart lines.
	cart    map[int][]time.Duration
	cartIDs map[int]string

	// mcp are the MCP batches in the order run; sameKey the keys whose
	// answer and CONFLICT were checked, sameKeyBad those that broke.
	mcp                 []mcpCalls
	sameKey, sameKeyBad int
	gatewayRSSMiB       float64
	directAudit         evidence.DirectReport
	directAuditTook     time.Duration

	events1, events50     int
	rssMiB                float64
	audited               int
	auditTook             time.Duration
	auditCPU              map[string]float64 // per history, ms: the auditor and each server
	loadBefore, loadAfter string
}

func (r *benchResult) add(c int, f map[string]floorFigures) {
	if r.floor == nil {
		r.floor = map[int][]map[string]floorFigures{}
	}
	r.floor[c] = append(r.floor[c], f)
}

func (r *benchResult) addDrafts(c int, d drafts) {
	if r.drafts == nil {
		r.drafts = map[int][]drafts{}
	}
	r.drafts[c] = append(r.drafts[c], d)
}

func (r *benchResult) addCart(lines int, d drafts) {
	if r.cart == nil {
		r.cart, r.cartIDs = map[int][]time.Duration{}, map[int]string{}
	}
	r.cart[lines] = append(r.cart[lines], d.complete...)
	r.cartIDs[lines] = d.ids[0]
}

// medianOf is the median of xs.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// sortedServices names the server processes the batches measured, the
// busiest (summed over the batches) first.
func sortedServices(ds []drafts) []string {
	total := map[string]float64{}
	for _, d := range ds {
		for name, v := range d.services {
			total[name] += v
		}
	}
	names := make([]string, 0, len(total))
	for name := range total {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return total[names[i]] > total[names[j]] })
	return names
}

// goal marks a figure against its goal.
func goal(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// table is the bench's one table, in the form docs/performance-log.md shows:
// per concurrency the median over rounds of draft orders/s, Floor6's and
// Floor6Local's, and the ratio to Floor6, then the draft-order figures
// with their goals (docs/performance.md#measuring-against-the-floor-make-bench).
func (r *benchResult) table(levels []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| in flight | draft orders/s | Floor6 wf/s | Floor6Local wf/s | Floor6LocalConfirm wf/s | draft ÷ Floor6 | draft ÷ Floor6Local | draft ÷ Floor6LocalConfirm | rounds (draft ÷ Floor6 each) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|\n")
	ratio16, local16, confirm16, protocol16 := 0.0, 0.0, 0.0, 0.0
	for _, c := range levels {
		if len(r.drafts[c]) == 0 {
			continue
		}
		var dw, fw, lw, cw, each []float64
		for i, d := range r.drafts[c] {
			dw = append(dw, d.perSecond())
			if i < len(r.floor[c]) {
				f6 := r.floor[c][i]["Floor6"].WPS
				fw = append(fw, f6)
				lw = append(lw, r.floor[c][i]["Floor6Local"].WPS)
				cw = append(cw, r.floor[c][i]["Floor6LocalConfirm"].WPS)
				each = append(each, d.perSecond()/f6)
			}
		}
		var rounds []string
		for _, e := range each {
			rounds = append(rounds, fmt.Sprintf("%.2f×", e))
		}
		ratio := medianOf(each)
		if c == 16 {
			ratio16, local16 = ratio, medianOf(dw)/medianOf(lw)
			confirm16, protocol16 = medianOf(dw)/medianOf(cw), medianOf(cw)/medianOf(lw)
		}
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.1f | **%.2f×** | %.2f× | %.2f× | %s |\n", c, medianOf(dw), medianOf(fw), medianOf(lw),
			medianOf(cw), ratio, medianOf(dw)/medianOf(lw), medianOf(dw)/medianOf(cw), strings.Join(rounds, ", "))
	}
	var worker16 float64
	fmt.Fprintf(&b, "\n| CPU per workflow, ms (median of rounds) | in flight | draft order | Floor6 | Floor6Local | Floor6LocalConfirm |\n|---|---|---|---|---|---|\n")
	for _, c := range levels {
		if len(r.drafts[c]) == 0 {
			continue
		}
		var ds, dw, fs, fw, ls, lw, cs, cw []float64
		for _, d := range r.drafts[c] {
			ds, dw = append(ds, d.serverCPU), append(dw, d.workerCPU)
		}
		for _, f := range r.floor[c] {
			fs, fw = append(fs, f["Floor6"].ServerCPU), append(fw, f["Floor6"].WorkerCPU)
			ls, lw = append(ls, f["Floor6Local"].ServerCPU), append(lw, f["Floor6Local"].WorkerCPU)
			cs, cw = append(cs, f["Floor6LocalConfirm"].ServerCPU), append(cw, f["Floor6LocalConfirm"].WorkerCPU)
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.1f | %.1f |\n", serverLabel(), c, medianOf(ds), medianOf(fs), medianOf(ls), medianOf(cs))
		if services := sortedServices(r.drafts[c]); len(services) > 1 {
			for _, name := range services {
				var sd, sf, sl, sc []float64
				for _, d := range r.drafts[c] {
					sd = append(sd, d.services[name])
				}
				for _, f := range r.floor[c] {
					sf, sl = append(sf, f["Floor6"].Services[name]), append(sl, f["Floor6Local"].Services[name])
					sc = append(sc, f["Floor6LocalConfirm"].Services[name])
				}
				fmt.Fprintf(&b, "| – %s | %d | %.1f | %.1f | %.1f | %.1f |\n", name, c, medianOf(sd), medianOf(sf), medianOf(sl), medianOf(sc))
			}
		}
		if c == 16 {
			worker16 = medianOf(dw)
		}
		fmt.Fprintf(&b, "| worker | %d | %.1f | %.1f | %.1f | %.1f |\n", c, medianOf(dw), medianOf(fw), medianOf(lw), medianOf(cw))
	}
	b.WriteString(r.saturation(levels))
	var all1 []time.Duration
	var f6p50, f6p99 []float64
	for i, d := range r.drafts[1] {
		all1 = append(all1, d.toTotal...)
		if i < len(r.floor[1]) {
			f6p50 = append(f6p50, r.floor[1][i]["Floor6"].P50)
			f6p99 = append(f6p99, r.floor[1][i]["Floor6"].P99)
		}
	}
	sortDurations(all1)
	p50, p99 := pct(all1, 50), pct(all1, 99)
	sortDurations(r.cart[1])
	sortDurations(r.cart[50])
	c1, c50 := pct(r.cart[1], 50), pct(r.cart[50], 50)
	rate := float64(r.audited) / r.auditTook.Seconds()
	fmt.Fprintf(&b, "\n| figure | measured | goal | |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| draft orders at 16 in flight ÷ Floor6 | %.2f× | ≥ 1.7× | %s |\n", ratio16, goal(ratio16 >= 1.7))
	fmt.Fprintf(&b, "| draft orders at 16 in flight ÷ Floor6LocalConfirm (the same two round trips, no work) | %.2f× | ≥ 0.8× | %s |\n", confirm16, goal(confirm16 >= 0.8))
	fmt.Fprintf(&b, "| worker CPU per draft order at 16 in flight | %.1f ms | ≤ 6.5 ms | %s |\n", worker16, goal(worker16 > 0 && worker16 <= 6.5))
	fmt.Fprintf(&b, "| draft orders at 16 in flight ÷ Floor6Local | %.2f× | — | |\n", local16)
	fmt.Fprintf(&b, "| Floor6LocalConfirm ÷ Floor6Local at 16 in flight (what the protocol alone allows) | %.2f× | — | |\n", protocol16)
	fmt.Fprintf(&b, "| start → total published, 1 in flight (%d orders) | p50 %.0f ms, p99 %.0f ms (Floor6 whole workflow: p50 %.0f ms, p99 %.0f ms) | p50 ≤ 40 ms, p99 ≤ 100 ms | %s |\n",
		len(all1), p50, p99, medianOf(f6p50), medianOf(f6p99), goal(p50 <= 40 && p99 <= 100))
	fmt.Fprintf(&b, "| 50-line ÷ 1-line cart, start → draft created, one at a time (p50) | %.0f ms ÷ %.0f ms = %.2f× | ≤ 2× | %s |\n",
		c50, c1, c50/c1, goal(c50 <= 2*c1))
	var floorEvents string
	if len(r.floor[1]) > 0 {
		floorEvents = fmt.Sprintf(" (Floor6: %d, Floor6Local: %d, Floor6LocalConfirm: %d)", r.floor[1][0]["Floor6"].Events,
			r.floor[1][0]["Floor6Local"].Events, r.floor[1][0]["Floor6LocalConfirm"].Events)
	}
	fmt.Fprintf(&b, "| history events per draft order, 1 line / 50 lines | %d / %d%s | same, ≤ 30 | %s |\n",
		r.events1, r.events50, floorEvents, goal(r.events50 <= r.events1 && r.events1 <= 30))
	fmt.Fprintf(&b, "| worker peak RSS (VmHWM) | %.0f MiB | ≤ 100 MiB | %s |\n", r.rssMiB, goal(r.rssMiB <= 100))
	fmt.Fprintf(&b, "| audit (`audit.AuditMany`, as `starter audit --query`) | %d histories in %.1f s = %.0f/s, all CLEAN (CPU per history: %s) | ≥ 300/s | %s |\n",
		r.audited, r.auditTook.Seconds(), rate, cpuPerHistory(r.auditCPU), goal(rate >= 300))
	b.WriteString(r.mcpRows())
	fmt.Fprintf(&b, "\nLoad average (1 5 15 min): %s before, %s after.\n", r.loadBefore, r.loadAfter)
	return b.String()
}

// cpuPerHistory names each process's CPU per audited history, the
// auditor first: what the audit's rate is spent on.
func cpuPerHistory(cpu map[string]float64) string {
	parts := []string{fmt.Sprintf("auditor %.2f ms", cpu["auditor"])}
	for _, n := range slices.Sorted(maps.Keys(cpu)) {
		if n != "auditor" {
			parts = append(parts, fmt.Sprintf("%s %.2f ms", n, cpu[n]))
		}
	}
	return strings.Join(parts, ", ")
}

// saturation is what each process used of the machine per concurrency
// (median of rounds: CPU per order × orders per second, in cores), so the
// curve says what saturates first.
func (r *benchResult) saturation(levels []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| draft orders, cores busy (median of rounds) | in flight | dev server | worker | orders/s |\n|---|---|---|---|---|\n")
	for _, c := range levels {
		var sc, wc, ps []float64
		for _, d := range r.drafts[c] {
			sc, wc, ps = append(sc, d.serverCPU*d.perSecond()/1000), append(wc, d.workerCPU*d.perSecond()/1000), append(ps, d.perSecond())
		}
		if len(ps) > 0 {
			fmt.Fprintf(&b, "| | %d | %.2f | %.2f | %.1f |\n", c, medianOf(sc), medianOf(wc), medianOf(ps))
		}
	}
	return b.String()
}

// mcpRows are the agents' figures: every MCP batch, then the goals.
func (r *benchResult) mcpRows() string {
	if len(r.mcp) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| MCP tools/call (official SDK client, `starter mcp serve`) | clients | calls | calls/s | p50 | p99 | CPU per call, ms: gateway / dev server / worker |\n|---|---|---|---|---|---|---|\n")
	var read1, read20, write1 *mcpCalls
	for i := range r.mcp {
		m := &r.mcp[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %.1f ms | %.1f ms | %.2f / %.2f / %.2f |\n", m.what, m.clients, m.n, m.perSecond(),
			pct(m.lat, 50), pct(m.lat, 99), m.gatewayCPU, m.serverCPU, m.workerCPU)
		switch {
		case strings.HasSuffix(m.what, ", direct") && m.clients == 1 && read1 == nil:
			read1 = m
		case strings.HasSuffix(m.what, ", direct") && m.clients > 1 && read20 == nil:
			read20 = m
		case strings.HasPrefix(m.what, "write") && write1 == nil:
			write1 = m
		}
	}
	fmt.Fprintf(&b, "\n| figure | measured | goal | |\n|---|---|---|---|\n")
	if read1 != nil {
		fmt.Fprintf(&b, "| MCP read-only quote, one at a time (p50) | %.1f ms | ≤ 15 ms | %s |\n", pct(read1.lat, 50), goal(pct(read1.lat, 50) <= 15))
	}
	if read20 != nil {
		fmt.Fprintf(&b, "| MCP read-only quotes, %d clients | %.0f calls/s | ≥ 300 calls/s | %s |\n", read20.clients, read20.perSecond(), goal(read20.perSecond() >= 300))
	}
	if write1 != nil {
		fmt.Fprintf(&b, "| MCP write tool, one at a time (p50) | %.1f ms | ≤ 40 ms | %s |\n", pct(write1.lat, 50), goal(pct(write1.lat, 50) <= 40))
	}
	fmt.Fprintf(&b, "| gateway peak RSS (VmHWM, direct reads) | %.0f MiB | — | |\n", r.gatewayRSSMiB)
	fmt.Fprintf(&b, "| same key → same answer, other arguments → CONFLICT | %d keys, %d broken | all | %s |\n", r.sameKey, r.sameKeyBad, goal(r.sameKeyBad == 0))
	a := r.directAudit
	fmt.Fprintf(&b, "| direct calls audited (`AuditDirect`: chains, bindings, envelopes) | %d calls, %d snapshots in %d chains in %.1f s, %s | CLEAN | %s |\n",
		a.Calls, a.Snapshots, a.Chains, r.directAuditTook.Seconds(), map[bool]string{true: "CLEAN", false: "findings"}[a.Clean], goal(a.Clean))
	return b.String()
}
