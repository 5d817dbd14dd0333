package commerce

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// stmtTrace records what a pool sends to PostgreSQL while it is on: each
// Query, QueryRow and Exec is one round trip once its statement is
// prepared on the connection; a prepare (the first use of a statement on a
// connection) is one more.
type stmtTrace struct {
	mu       sync.Mutex
	on       bool
	sql      []string
	prepares int
}

func (s *stmtTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.sql = append(s.sql, d.SQL)
	}
	return ctx
}

func (s *stmtTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *stmtTrace) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.sql = append(s.sql, "batch")
	}
	return ctx
}

func (s *stmtTrace) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (s *stmtTrace) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (s *stmtTrace) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.prepares++
	}
	return ctx
}

func (s *stmtTrace) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// during runs f with the trace on and returns the statements sent, without
// the invoker's evidence append (not the tool's), and the prepares.
func (s *stmtTrace) during(f func()) ([]string, int) {
	s.mu.Lock()
	s.on, s.sql, s.prepares = true, nil, 0
	s.mu.Unlock()
	f()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
	var tool []string
	for _, q := range s.sql {
		if !strings.Contains(q, "evidence_append") {
			q = strings.Join(strings.Fields(q), " ")
			if i := strings.Index(q, "FROM draft_order_create"); i > 0 {
				q = q[i+len("FROM "):] // the column list says nothing
			}
			if len(q) > 60 {
				q = q[:60] + "…"
			}
			tool = append(tool, q)
		}
	}
	return tool, s.prepares
}

// corruptDrafts breaks the drafts of keys starting "corrupt-" before the
// real store writes them (a currency its CHECK refuses), so the database
// itself refuses the statement: a permanent failure, rolled back whole.
type corruptDrafts struct{ PGDrafts }

func (c corruptDrafts) Create(ctx context.Context, d NewDraft, a evidence.TwoPhaseRow) (Created, error) {
	if strings.HasPrefix(d.Scope.IdempotencyKey, "corrupt-") {
		d.Total.Currency = "eur"
	}
	return c.PGDrafts.Create(ctx, d, a)
}

// TestDraftOrderRoundTrips counts the statements checkout.create_draft_order
// sends on each path (docs/evidence.md#one-transaction): the happy path is one round trip, with the
// audit row and the draft committed together.
func TestDraftOrderRoundTrips(t *testing.T) {
	tr := &stmtTrace{}
	// One connection, so a warm-up prepares the statements the happy path
	// uses and the count below is round trips, not prepares.
	pool, err := db.Open(context.Background(), testenv.Database(t), db.MaxConns(1),
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e := newEnvOn(t, pool, func(d *ToolDeps) {
		d.Drafts = corruptDrafts{PGDrafts{Pool: d.Pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}}
	})
	ctx := context.Background()
	args := draftArgs(t)
	if _, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_warm", "warm-up-key-1"), args); err != nil {
		t.Fatal(err)
	}
	pending := func(req toolkit.Request, tool string) {
		t.Helper()
		if _, err := e.store.WritePending(ctx, evidence.AuditEntry{CorrelationID: req.CorrelationID, Tool: tool,
			UserID: req.UserID, ActorType: req.Actor.Type, Reason: "an earlier attempt"}); err != nil {
			t.Fatal(err)
		}
	}
	first := request("u_rt", "round-trip-key-1")
	var firstID string
	in := fixture(t)
	in.Shipping.Cost = eur(990)
	tot, err := ComputeTotal(in)
	if err != nil {
		t.Fatal(err)
	}
	otherTotal := CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash, ShipTo: berlin}

	cases := []struct {
		name   string
		req    toolkit.Request
		args   CreateDraftOrderArgs
		setup  func(toolkit.Request)
		expire bool
		code   toolkit.Code // "" for a draft
		want   int          // statements the tool sends
		audit  evidence.AuditStatus
		check  func(DraftOrder)
	}{
		{name: "first create", req: first, args: args, want: 1, audit: evidence.AuditSuccess,
			check: func(d DraftOrder) { firstID = d.DraftOrderID }},
		{name: "repeat, same total", req: request("u_rt", "round-trip-key-1"), args: args, want: 1, audit: evidence.AuditSuccess,
			check: func(d DraftOrder) {
				if !d.Replayed || d.DraftOrderID != firstID {
					t.Errorf("repeat answered %+v, want the replay of %s", d, firstID)
				}
			}},
		{name: "repeat, other total", req: request("u_rt", "round-trip-key-1"), args: otherTotal, code: toolkit.Conflict, want: 1},
		{name: "pending audit of an earlier attempt", req: request("u_rt", "round-trip-key-2"), args: args,
			setup: func(r toolkit.Request) { pending(r, ToolCreateDraftOrder) }, want: 1, audit: evidence.AuditSuccess},
		{name: "audit closed as failed", req: request("u_rt", "round-trip-key-3"), args: args,
			setup: func(r toolkit.Request) {
				pending(r, ToolCreateDraftOrder)
				if _, err := e.store.Finalize(ctx, r.CorrelationID, evidence.AuditFailed,
					map[string]any{"reconcile_action": "mark_failed_timeout"}); err != nil {
					t.Fatal(err)
				}
			}, code: toolkit.Conflict, want: 1, audit: evidence.AuditFailed},
		{name: "correlation id of another tool", req: request("u_rt", "round-trip-key-4"), args: args,
			setup: func(r toolkit.Request) { pending(r, "stripe.create_relink_url") }, code: toolkit.Conflict, want: 1,
			audit: evidence.AuditPending},
		{name: "refused by the database", req: request("u_rt", "corrupt-key-0001"), args: args,
			code: toolkit.InvalidArgument, want: 3, audit: evidence.AuditFailed}, // create, then pending and failed
		{name: "repeat after expiry", req: request("u_rt", "round-trip-key-1"), args: args, expire: true, want: 3,
			check: func(d DraftOrder) {
				if !d.Replayed || d.DraftOrderID != firstID {
					t.Errorf("late repeat answered %+v", d)
				}
			}}, // find, finalise, no row to finalise
		{name: "first call after expiry", req: request("u_rt", "round-trip-key-5"), args: args, expire: true,
			code: toolkit.NeedsUserConfirmation, want: 3}, // find, finalise, no row to finalise
	}
	expired := false
	for _, c := range cases {
		if c.setup != nil {
			c.setup(c.req)
		}
		if c.expire && !expired {
			e.advance(16 * time.Minute)
			expired = true
		}
		var d DraftOrder
		var callErr error
		sql, prepares := tr.during(func() { d, _, callErr = invoke[DraftOrder](t, e, ToolCreateDraftOrder, c.req, c.args) })
		t.Logf("%s: %d statements (%d prepares): %q", c.name, len(sql), prepares, sql)
		if c.code == "" && callErr != nil {
			t.Errorf("%s: %v", c.name, callErr)
			continue
		}
		if c.code != "" && toolkit.CodeOf(callErr) != c.code {
			t.Errorf("%s: answered %v, want %s", c.name, callErr, c.code)
			continue
		}
		if len(sql) != c.want {
			t.Errorf("%s: %d statements, want %d: %v", c.name, len(sql), c.want, sql)
		}
		if c.name == "first create" && prepares != 0 {
			t.Errorf("%s: %d prepares after the warm-up", c.name, prepares)
		}
		if c.check != nil {
			c.check(d)
		}
		if a := e.audits(t, c.req.CorrelationID); c.audit == "" && len(a) != 0 {
			t.Errorf("%s: audit rows %+v, want none", c.name, a)
		} else if c.audit != "" && (len(a) != 1 || a[0].Status != c.audit) {
			t.Errorf("%s: audit rows %+v, want one %s", c.name, a, c.audit)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM draft_orders WHERE idempotency_key IN
		('round-trip-key-3', 'round-trip-key-4', 'corrupt-key-0001', 'round-trip-key-5')`); n != 0 {
		t.Errorf("%d drafts written by refused calls", n)
	}
	// The happy path's audit row is the two-phase row Finalize used to
	// leave: success, finalised, naming the draft.
	var refs []byte
	var finalized *time.Time
	if err := pool.QueryRow(ctx, `SELECT evidence_refs, finalized_at FROM audit_events WHERE correlation_id = $1 AND two_phase`,
		first.CorrelationID).Scan(&refs, &finalized); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(refs, &m)
	if finalized == nil || m["draft_order_id"] != firstID || m["correlation_id"] != first.CorrelationID ||
		m["source"] != "activity" || m["payload_sha"] == "" || m["replayed"] != nil {
		t.Errorf("audit of the first create: refs %s, finalized_at %v", refs, finalized)
	}
}
