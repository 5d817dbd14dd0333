package commerce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The in-memory stack runs the real registry, schemas, sanitising and
// invoker without PostgreSQL: the catalogue is the seed migration's data,
// evidence goes to a recorder in memory. `go test -short` (make test-unit)
// runs the matrix on it.

// seedFile is the migration that seeds the sample catalogue (and the DE
// warehouse's stock), warehouseFile the one with the other warehouses'.
const (
	seedFile      = "../internal/db/migrations/00011_catalog_seed.sql"
	warehouseFile = "../internal/db/migrations/00060_catalog_warehouse_stock.sql"
)

// memCatalog is a Catalog over products held in memory.
type memCatalog map[string]Product

// Products implements Catalog.
func (c memCatalog) Products(_ context.Context, skus []string) (map[string]Product, error) {
	out := map[string]Product{}
	for _, s := range skus {
		if p, ok := c[s]; ok {
			out[s] = p
		}
	}
	return out, nil
}

// seedCatalog reads the products and stock of the seed migration, the same
// rows PostgreSQL holds after migrating.
func seedCatalog(t testing.TB) memCatalog {
	t.Helper()
	raw, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	sql := string(raw)
	start := strings.Index(sql, "INSERT INTO catalog_products")
	end := strings.Index(sql, "INSERT INTO catalog_stock")
	if start < 0 || end < start {
		t.Fatalf("%s: no product or stock insert", seedFile)
	}
	cat := memCatalog{}
	for _, line := range strings.Split(sql[start:end], "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "('") {
			continue
		}
		f, err := sqlTuple(strings.TrimRight(line, ",;"))
		if err != nil || len(f) != 15 {
			t.Fatalf("seed row %q: %v (%d fields)", line, err, len(f))
		}
		num := func(s string) int {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("seed row %q: %v", line, err)
			}
			return n
		}
		flt := func(s string) float64 {
			if s == "" {
				return 0
			}
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("seed row %q: %v", line, err)
			}
			return x
		}
		p := Product{SKU: f[0], Title: f[1], Category: f[2], BasePrice: Money{Amount: int64(num(f[3])), Currency: f[4]},
			WeightGrams: num(f[5]), Dims: Dimensions{LengthMM: num(f[6]), WidthMM: num(f[7]), HeightMM: num(f[8])},
			HSCode: f[9], Origin: f[10], UNNumber: f[11], BatteryWh: flt(f[12]), ABVPercent: flt(f[14])}
		if f[13] != "" {
			p.VolumeML = num(f[13])
		}
		cat[p.SKU] = p
	}
	stock := sql[end:]
	def := regexp.MustCompile(`ELSE (\d+) END`).FindStringSubmatch(stock)
	if len(cat) == 0 || def == nil {
		t.Fatalf("%s: %d products, default stock %v", seedFile, len(cat), def)
	}
	for sku, p := range cat {
		p.Available, _ = strconv.Atoi(def[1])
		cat[sku] = p
	}
	for _, m := range regexp.MustCompile(`WHEN '([A-Z0-9-]+)' THEN (\d+)`).FindAllStringSubmatch(stock, -1) {
		p, ok := cat[m[1]]
		if !ok {
			t.Fatalf("seed stock for unknown sku %s", m[1])
		}
		p.Available, _ = strconv.Atoi(m[2])
		cat[m[1]] = p
	}
	raw, err = os.ReadFile(warehouseFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "('") {
			continue
		}
		f, err := sqlTuple(strings.TrimRight(line, ",;"))
		if err != nil || len(f) != 3 {
			t.Fatalf("warehouse stock row %q: %v", line, err)
		}
		p, ok := cat[f[0]]
		if !ok {
			t.Fatalf("warehouse stock for unknown sku %s", f[0])
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatal(err)
		}
		if p.Stock == nil {
			p.Stock = map[string]int{}
		}
		p.Stock[f[1]] = n
		cat[f[0]] = p
	}
	return cat
}

// sqlTuple splits an SQL values tuple such as "('a', 12, NULL)" into its
// values: strings unquoted (a doubled quote inside one is a quote), NULL
// as "".
func sqlTuple(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return nil, errors.New("not a tuple")
	}
	s = s[1 : len(s)-1]
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for {
				if i >= len(s) {
					return nil, errors.New("unterminated string")
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						v.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				v.WriteByte(s[i])
				i++
			}
		} else {
			for i < len(s) && s[i] != ',' {
				v.WriteByte(s[i])
				i++
			}
		}
		val := strings.TrimSpace(v.String())
		if val == "NULL" {
			val = ""
		}
		out = append(out, val)
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i < len(s) {
			if s[i] != ',' {
				return nil, fmt.Errorf("expected a comma at %d", i)
			}
			i++
		}
	}
	return out, nil
}

// memEvidence records snapshots in memory, as the evidence store would
// keep them, so tests can look an envelope's snapshot up.
type memEvidence struct {
	toolkit.Unstaged
	mu    sync.Mutex
	snaps map[string]toolkit.Snapshot
}

// RecordStep implements toolkit.EvidenceSink.
func (m *memEvidence) RecordStep(_ context.Context, s toolkit.Snapshot) (toolkit.Recorded, error) {
	if s.Tool == "" || s.OutputHash == "" || len(s.Output) == 0 {
		return toolkit.Recorded{}, fmt.Errorf("memEvidence: incomplete snapshot for %q", s.Tool)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snaps == nil {
		m.snaps = map[string]toolkit.Snapshot{}
	}
	id := fmt.Sprintf("ev_mem_%06d", len(m.snaps)+1)
	m.snaps[id] = s
	return toolkit.Recorded{SnapshotID: id}, nil
}

func (m *memEvidence) get(id string) (toolkit.Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.snaps[id]
	return s, ok
}

// noWrites stands in for the audit log and the draft store: the read-only
// tools never write, and a test that reaches a write fails on it.
type noWrites struct{}

var errNoWrites = errors.New("in-memory stack: writes are not supported")

func (noWrites) WritePending(context.Context, evidence.AuditEntry) (int64, error) {
	return 0, errNoWrites
}

func (noWrites) Finalize(context.Context, string, evidence.AuditStatus, map[string]any) (bool, error) {
	return false, errNoWrites
}

func (noWrites) Find(context.Context, DraftScope) (*StoredDraft, error) { return nil, errNoWrites }

func (noWrites) WriteAtomic(context.Context, evidence.AuditEntry, evidence.AtomicWrite) error {
	return errNoWrites
}

func (noWrites) Create(context.Context, NewDraft, evidence.TwoPhaseRow) (Created, error) {
	return Created{}, errNoWrites
}

// newMemEnv is newEnv without PostgreSQL: the real registry and invoker
// over the seed catalogue and an in-memory evidence recorder.
func newMemEnv(t testing.TB) (*toolkit.Invoker, memCatalog, *memEvidence) {
	t.Helper()
	cipher, err := evidence.NewAESGCMFromBase64(evidencetest.KeyID, evidencetest.Key())
	if err != nil {
		t.Fatal(err)
	}
	cat := seedCatalog(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	deps := ToolDeps{Audit: noWrites{}, Sealer: cipher, Unsealed: true, Catalog: cat, Drafts: noWrites{}, Clock: func() time.Time { return at }}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, deps); err != nil {
		t.Fatal(err)
	}
	ev := &memEvidence{}
	return toolkit.NewInvoker(reg, ev, nil), cat, ev
}
