package commerce

import (
	"context"
	"testing"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// The write takes the draft's stock in its own statement
// (docs/quote-seals.md#stock-at-the-write): once per scope however often
// the key is repeated, in the warehouse that ships each line, and not at
// all when a line is short — then nothing is written and the short lines
// are named.
func TestDraftCreateTakesStockOnce(t *testing.T) {
	pool := testenv.Postgres(t)
	s := PGDrafts{Pool: pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
	ctx := context.Background()
	d, a := createInput(t, 41, "stock-key-0001")
	line := d.Total.Lines[0]
	stock := func() int {
		return countRows(t, pool, `SELECT reserved FROM catalog_stock WHERE sku = $1`, line.SKU)
	}
	before := stock()
	got, err := s.Create(ctx, d, a)
	if err != nil || got.Outcome != CreateInserted {
		t.Fatalf("create = %+v, %v", got, err)
	}
	if stock() != before+line.Quantity {
		t.Fatalf("reserved %d, want %d", stock(), before+line.Quantity)
	}
	again, a2 := createInput(t, 42, "stock-key-0001")
	again.Total = d.Total
	if got, err := s.Create(ctx, again, a2); err != nil || got.Outcome != CreateReplayed {
		t.Fatalf("repeat = %+v, %v", got, err)
	}
	if stock() != before+line.Quantity {
		t.Fatalf("a repeat took stock again: reserved %d", stock())
	}

	// Another order for more than is left: nothing written, the line named.
	if _, err := pool.Exec(ctx, `UPDATE catalog_stock SET on_hand = reserved + 1 WHERE sku = $1`, line.SKU); err != nil {
		t.Fatal(err)
	}
	short, a3 := createInput(t, 43, "stock-key-0002")
	short.Total.Lines[0].Quantity = 2
	drafts := countRows(t, pool, `SELECT count(*) FROM draft_orders`)
	got, err = s.Create(ctx, short, a3)
	if err != nil || got.Outcome != CreateOutOfStock || len(got.Short) != 1 || got.Short[0].SKU != line.SKU ||
		got.Short[0].Warehouse != DefaultWarehouse || got.Short[0].Available != 1 || got.Short[0].Requested != 2 {
		t.Fatalf("short create = %+v, %v", got, err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM draft_orders`); n != drafts {
		t.Fatalf("%d drafts after a short write, want %d", n, drafts)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM audit_events WHERE correlation_id = $1`, a3.CorrelationID); n != 0 {
		t.Fatalf("the short write left %d audit rows in its statement", n)
	}
}

// Reservations follow the warehouse of each line: a split total's parcels,
// else its one warehouse (DE when it names none).
func TestReservationsFollowTheParcels(t *testing.T) {
	tot := Total{Lines: []TotalLine{{SKU: "A-1", Quantity: 2}, {SKU: "B-1", Quantity: 1}}}
	if r := Reservations(tot); len(r) != 2 || r[0].Warehouse != "DE" || r[1].Quantity != 1 {
		t.Fatalf("no warehouse: %+v", r)
	}
	tot.ShipFrom = "US"
	if r := Reservations(tot); r[0].Warehouse != "US" || r[1].Warehouse != "US" {
		t.Fatalf("from US: %+v", r)
	}
	tot.Parcels = []TotalParcel{{ShipFrom: "GB", Items: []LineItem{{SKU: "A-1", Quantity: 2}}}, {ShipFrom: "US", Items: []LineItem{{SKU: "B-1", Quantity: 1}}}}
	if r := Reservations(tot); r[0] != (Reservation{"A-1", "GB", 2}) || r[1] != (Reservation{"B-1", "US", 1}) {
		t.Fatalf("split: %+v", r)
	}
}
