package evidence

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The stock ledger's invariants (docs/stock.md#reconcile): a unit a draft
// order took comes back or is committed exactly once.
const (
	// InvStockNeverReturned: a hold still held after its end (plus
	// StockGrace), or held while its draft order is cancelled or expired:
	// units nobody gave back.
	InvStockNeverReturned = "stock_never_returned"
	// InvStockTakenTwice: a draft's units both released and committed, a
	// settled hold whose movements do not match what it reserved, or a
	// stock row whose reserved count the ledger does not explain (units
	// taken or given back outside it).
	InvStockTakenTwice = "stock_taken_twice"
	// InvStockReturnedTwice: a draft's line given back (restock, on a
	// returned signal) more units than it committed, or given back while
	// its hold is not committed: a unit returned twice.
	InvStockReturnedTwice = "stock_returned_twice"
)

// StockGrace is how long after its end a hold may still be held (its
// order's run's timer and the release's retries).
const StockGrace = 15 * time.Minute

// stockHoldsSQL finds holds that break the ledger's rules, with why.
const stockHoldsSQL = `
	WITH m AS (
		SELECT draft_order_id,
		       sum(quantity) FILTER (WHERE kind = 'reserve') AS reserved,
		       sum(quantity) FILTER (WHERE kind = 'release') AS released,
		       sum(quantity) FILTER (WHERE kind = 'commit') AS committed
		FROM stock_movements GROUP BY draft_order_id)
	SELECT h.draft_order_id, h.workflow_id, h.correlation_id,
	       CASE
	         WHEN coalesce(m.released, 0) > 0 AND coalesce(m.committed, 0) > 0 THEN 'taken: released and committed'
	         WHEN h.state = 'released' AND coalesce(m.released, 0) <> coalesce(m.reserved, 0) THEN 'taken: released ' || coalesce(m.released, 0) || ' of ' || coalesce(m.reserved, 0)
	         WHEN h.state = 'committed' AND coalesce(m.committed, 0) <> coalesce(m.reserved, 0) THEN 'taken: committed ' || coalesce(m.committed, 0) || ' of ' || coalesce(m.reserved, 0)
	         WHEN h.state = 'held' AND (coalesce(m.released, 0) > 0 OR coalesce(m.committed, 0) > 0) THEN 'taken: held yet moved'
	         WHEN h.state = 'held' AND d.status IN ('cancelled', 'expired') THEN 'never: held while the draft is ' || d.status
	         WHEN h.state = 'held' AND h.hold_until < now() - make_interval(secs => $1) THEN 'never: held past its end ' || to_char(h.hold_until, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
	       END AS why
	FROM stock_holds h
	JOIN draft_orders d ON d.draft_order_id = h.draft_order_id
	LEFT JOIN m ON m.draft_order_id = h.draft_order_id`

// stockDriftSQL compares each stock row's reserved count with what the
// ledger says it must be: opening + reserve - release - commit.
const stockDriftSQL = `
	WITH rows AS (
		SELECT sku, 'DE' AS warehouse, reserved FROM catalog_stock
		UNION ALL SELECT sku, warehouse, reserved FROM catalog_warehouse_stock),
	ledger AS (
		SELECT sku, warehouse,
		       sum(CASE kind WHEN 'reserve' THEN quantity WHEN 'release' THEN -quantity WHEN 'commit' THEN -quantity ELSE 0 END) AS held
		FROM stock_movements GROUP BY sku, warehouse)
	SELECT r.sku, r.warehouse, r.reserved, coalesce(o.reserved, 0) + coalesce(l.held, 0) AS expected
	FROM rows r
	LEFT JOIN stock_opening o ON o.sku = r.sku AND o.warehouse = r.warehouse
	LEFT JOIN ledger l ON l.sku = r.sku AND l.warehouse = r.warehouse
	WHERE r.reserved <> coalesce(o.reserved, 0) + coalesce(l.held, 0)
	ORDER BY r.warehouse, r.sku`

// stockReturnsSQL finds, per draft and line, returns (restock) the ledger
// cannot explain: more units than were committed, or any on a hold that
// was never committed (docs/stock.md#returns).
const stockReturnsSQL = `
	SELECT m.draft_order_id, h.workflow_id, h.state, m.sku, m.warehouse,
	       sum(m.quantity) FILTER (WHERE m.kind = 'commit') AS committed,
	       sum(m.quantity) FILTER (WHERE m.kind = 'restock') AS returned,
	       count(DISTINCT m.refund_run) FILTER (WHERE m.kind = 'restock') AS runs
	FROM stock_movements m JOIN stock_holds h USING (draft_order_id)
	WHERE m.kind IN ('commit', 'restock')
	GROUP BY m.draft_order_id, h.workflow_id, h.state, m.sku, m.warehouse
	HAVING coalesce(sum(m.quantity) FILTER (WHERE m.kind = 'restock'), 0) > 0
	   AND (h.state <> 'committed'
	        OR sum(m.quantity) FILTER (WHERE m.kind = 'restock') > coalesce(sum(m.quantity) FILTER (WHERE m.kind = 'commit'), 0))
	ORDER BY m.draft_order_id, m.warehouse, m.sku`

// checkStockReturns reports lines returned more often than committed.
func checkStockReturns(ctx context.Context, pool *pgxpool.Pool, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, stockReturnsSQL)
	if err != nil {
		return dbError("check stock returns", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, wf, state, sku, wh string
		var committed *int64
		var returned, runs int64
		if err := rows.Scan(&id, &wf, &state, &sku, &wh, &committed, &returned, &runs); err != nil {
			return dbError("check stock returns", err)
		}
		c := int64(0)
		if committed != nil {
			c = *committed
		}
		rep.StockReturnedTwice++
		rep.addViolation(Violation{Invariant: InvStockReturnedTwice, WorkflowID: wf, DraftOrderID: id,
			Detail: fmt.Sprintf("%s in %s: returned %d by %d refund runs, committed %d (hold %s): %d units returned twice",
				sku, wh, returned, runs, c, state, returned-c)})
	}
	return rows.Err()
}

// checkStockLedger reports holds that broke the ledger's rules and stock
// rows the ledger does not explain.
func checkStockLedger(ctx context.Context, pool *pgxpool.Pool, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, `SELECT * FROM (`+stockHoldsSQL+`) x WHERE why IS NOT NULL ORDER BY draft_order_id`, StockGrace.Seconds())
	if err != nil {
		return dbError("check stock holds", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, wf, corr, why string
		if err := rows.Scan(&id, &wf, &corr, &why); err != nil {
			return dbError("check stock holds", err)
		}
		inv := InvStockTakenTwice
		if why[:5] == "never" {
			inv = InvStockNeverReturned
			rep.StockNeverReturned++
		} else {
			rep.StockTakenTwice++
		}
		rep.addViolation(Violation{Invariant: inv, WorkflowID: wf, CorrelationID: corr, DraftOrderID: id, Detail: why})
	}
	if err := rows.Err(); err != nil {
		return dbError("check stock holds", err)
	}
	drift, err := pool.Query(ctx, stockDriftSQL)
	if err != nil {
		return dbError("check stock rows", err)
	}
	defer drift.Close()
	for drift.Next() {
		var sku, wh string
		var got, want int
		if err := drift.Scan(&sku, &wh, &got, &want); err != nil {
			return dbError("check stock rows", err)
		}
		rep.StockTakenTwice++
		rep.addViolation(Violation{Invariant: InvStockTakenTwice,
			Detail: fmt.Sprintf("%s in %s: reserved %d, the ledger explains %d (%+d units moved outside it)", sku, wh, got, want, got-want)})
	}
	if err := drift.Err(); err != nil {
		return dbError("check stock rows", err)
	}
	return checkStockReturns(ctx, pool, rep)
}
