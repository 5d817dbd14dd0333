package merchant

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// appRole connects to a fresh test database as one of the real roles of
// docs/evidence.md#database-roles, neither a superuser (superusers are
// never bound by row-level security): owner true as cartwright_owner, the
// merchants table's owner (FORCE must bind it too); false as the runtime
// role the worker and the gateway log in as, which owns nothing. The pool
// has one connection, so a setting that leaked past its transaction would
// be seen by the next query.
func appRole(t *testing.T, owner bool) *pgxpool.Pool {
	t.Helper()
	dsn := testenv.Database(t)
	if owner {
		dsn = testenv.OwnerDSNFor(dsn)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var super, bypass bool
	if err := pool.QueryRow(ctx, "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").Scan(&super, &bypass); err != nil {
		t.Fatal(err)
	}
	if super || bypass {
		t.Fatalf("the test role may bypass row-level security (superuser %v, bypassrls %v)", super, bypass)
	}
	return pool
}

// visible is every merchant id a query with no WHERE sees in a
// transaction that set cartwright.tenant to tenant (none: no setting).
func visible(t *testing.T, pool *pgxpool.Pool, tenant string) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if tenant != "" {
			if _, err := tx.Exec(ctx, "SELECT set_config('cartwright.tenant', $1, true)", tenant); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, "SELECT merchant_id FROM merchants ORDER BY merchant_id")
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestTenantRowLevelSecurity (docs/mcp.md#tenants): PostgreSQL itself
// keeps a tenant to its merchants. A query with no WHERE at all (a bug in
// Go) sees only the tenant's rows; no setting sees nothing; the setting
// ends with its transaction; the table's owner is bound too (FORCE), and
// so is the runtime role the service runs as.
func TestTenantRowLevelSecurity(t *testing.T) {
	for _, owner := range []bool{true, false} {
		name := "runtime role"
		if owner {
			name = "table owner"
		}
		t.Run(name, func(t *testing.T) {
			pool := appRole(t, owner)
			all := []string{"m_acme_goods", "m_blue_harbor", "m_cedar_studio", "m_jane_crafts"}
			for _, c := range []struct {
				tenant string
				want   []string
			}{
				{"", nil},
				{"tenant_acme", []string{"m_acme_goods", "m_cedar_studio"}},
				{"tenant_harbor", []string{"m_blue_harbor"}},
				{"tenant_nobody", nil},
				{AllTenants, all},
				{"", nil}, // the previous transaction's setting did not stay
			} {
				if got := visible(t, pool, c.tenant); !slices.Equal(got, c.want) {
					t.Fatalf("tenant %q sees %v, want %v", c.tenant, got, c.want)
				}
			}
			// The store on the same role: another tenant's merchant is
			// not there, its session is another tenant's.
			s := NewStore(pool)
			ctx := context.Background()
			if _, found, err := s.ByID(ctx, "tenant_acme", "m_blue_harbor"); found || err != nil {
				t.Fatalf("tenant_acme read m_blue_harbor: found %v err %v", found, err)
			}
			if r, found, err := s.ByID(ctx, "tenant_acme", "m_acme_goods"); !found || err != nil || r.StripeAccountID != "acct_1CwAcmeGoods0001" {
				t.Fatalf("tenant_acme's own merchant: %+v %v %v", r, found, err)
			}
			if _, _, err := s.BySession(ctx, "tenant_acme", "sess_demo_blue_0001"); !errors.Is(err, ErrOtherTenant) {
				t.Fatalf("another tenant's session: %v", err)
			}
			if _, found, _ := s.ByStripeAccount(ctx, "tenant_acme", "acct_1CwBlueHarbor001"); found {
				t.Fatal("tenant_acme found tenant_harbor's Stripe account")
			}
			if _, _, err := s.ByID(ctx, "", "m_acme_goods"); err == nil {
				t.Fatal("a read without a scope ran")
			}
			if !owner {
				// The runtime role owns nothing: it cannot switch the
				// policy off for itself.
				for _, q := range []string{
					"ALTER TABLE merchants NO FORCE ROW LEVEL SECURITY",
					"ALTER TABLE merchants DISABLE ROW LEVEL SECURITY",
					"DROP POLICY merchants_tenant ON merchants",
				} {
					if _, err := pool.Exec(ctx, q); err == nil {
						t.Fatalf("the runtime role ran %q", q)
					}
				}
			}
			// WITH CHECK: a tenant cannot write a merchant into another
			// tenant (or the platform), nor can a transaction that names none.
			for _, c := range []struct{ setting, tenant string }{
				{"tenant_acme", "tenant_harbor"}, {"tenant_acme", ""}, {"", "tenant_acme"},
			} {
				err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, "SELECT set_config('cartwright.tenant', $1, true)", c.setting); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, `INSERT INTO merchants (merchant_id, display_name, country, business_type, tenant)
						VALUES ('m_rls_sneak', 'Sneak', 'GB', 'company', nullif($1, ''))`, c.tenant)
					return err
				})
				if err == nil {
					t.Fatalf("%s wrote a merchant of tenant %q", name, c.tenant)
				}
			}
			// The owner's UPDATE with no tenant is filtered to no row; the
			// runtime role may not write merchants at all (migration
			// 00230: operators provision them, docs/evidence.md#database-roles).
			if _, err := pool.Exec(ctx, `UPDATE merchants SET tenant = 'tenant_acme'`); owner && err != nil {
				t.Fatal(err)
			} else if !owner && err == nil {
				t.Fatal("the runtime role updated merchants")
			}
			if got := visible(t, pool, "tenant_acme"); !slices.Equal(got, []string{"m_acme_goods", "m_cedar_studio"}) {
				t.Fatalf("an UPDATE with no tenant moved merchants: tenant_acme sees %v", got)
			}
		})
	}
}

// TestGetRowKeepsATenantToItsMerchants: merchant.get_row called for a
// tenant answers its own merchants and refuses every other one with
// FORBIDDEN, the same for a merchant that exists elsewhere and one that
// does not; the refusal is evidenced like any refusal.
func TestGetRowKeepsATenantToItsMerchants(t *testing.T) {
	pool := appRole(t, false) // the role the gateway runs as
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, Deps{Store: NewStore(pool)}); err != nil {
		t.Fatal(err)
	}
	ev := &countingEvidence{}
	inv := toolkit.NewInvoker(reg, ev, nil)
	ctx := context.Background()
	r := req()
	r.Tenant = "tenant_acme"
	for _, c := range []struct {
		in      map[string]any
		allowed bool
	}{
		{map[string]any{"merchant_id": "m_acme_goods"}, true},
		{map[string]any{"user_session_id": "sess_demo_acme_0001"}, true},
		{map[string]any{"merchant_id": "m_blue_harbor"}, false},
		{map[string]any{"merchant_id": "m_jane_crafts"}, false},
		{map[string]any{"merchant_id": "m_nobody_here"}, false},
		{map[string]any{"user_session_id": "sess_demo_blue_0001"}, false},
	} {
		before := ev.n
		resp, err := inv.Invoke(ctx, ToolGetRow, r, c.in)
		if c.allowed {
			if err != nil || !resp.OK {
				t.Fatalf("%v: %+v %v", c.in, resp, err)
			}
			continue
		}
		if toolkit.CodeOf(err) != toolkit.Forbidden {
			t.Fatalf("%v: err %v, want FORBIDDEN", c.in, err)
		}
		if ev.n != before+1 {
			t.Fatalf("%v: the refusal left no evidence", c.in)
		}
	}
}

// countingEvidence counts the snapshots the invoker records.
type countingEvidence struct {
	toolkit.Unstaged
	n int
}

func (c *countingEvidence) RecordStep(context.Context, toolkit.Snapshot) (toolkit.Recorded, error) {
	c.n++
	return toolkit.Recorded{SnapshotID: "ev_test"}, nil
}
