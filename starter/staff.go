package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// staffCmd manages the staff credentials the codec server accepts.
func (a *app) staffCmd() *cobra.Command {
	return group("staff", "Staff credentials for the codec server",
		`Staff tokens let support staff see decoded workflow payloads through the codec
server (the Web UI's codec endpoint, temporal --codec-endpoint). Only a token's
SHA-256 is stored; every decode is logged in evidence_access_log.`,
		a.staffTokenCmd(), a.staffRevokeCmd())
}

type staffTokenOut struct {
	Staff     string    `json:"staff"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (a *app) staffTokenCmd() *cobra.Command {
	var staff, label string
	var ttl time.Duration
	c := &cobra.Command{
		Use:   "token --staff ID [--expires-in 720h] [--label TEXT]",
		Short: "Issue a codec-server token for an active staff member (printed once)",
		Long: `Issue a bearer token for an active member of the staff table. It is printed
once and never stored in clear, and expires after --expires-in (at most 90
days: docs/support.md#staff-tokens). Use it with the codec server: sign in at
http://localhost:8089/codec/login for the Web UI, or
  temporal workflow show ... --codec-endpoint http://localhost:8089/codec --codec-auth "Bearer <token>"
Needs CARTWRIGHT_PG_ISSUER_DSN (the issuing role). Exit 1 (FORBIDDEN) for an unknown or inactive staff id,
exit 2 (INVALID_ARGUMENT) for a lifetime over 90 days.`,
		Args: cobra.NoArgs,
		RunE: a.withStaffDB(&staff, func(ctx context.Context, pool *pgxpool.Pool) error {
			tok, err := codecserver.IssueToken(ctx, pool, staff, label, ttl)
			if err != nil {
				return err
			}
			out := staffTokenOut{Staff: staff, Token: tok, ExpiresAt: time.Now().Add(ttl).UTC().Truncate(time.Second)}
			a.emit(out, func(w io.Writer) { fmt.Fprintln(w, tok) })
			return nil
		}),
	}
	c.Flags().StringVar(&staff, "staff", "", "staff id (staff table), e.g. alice.support")
	c.Flags().DurationVar(&ttl, "expires-in", 30*24*time.Hour, "how long the token is valid (at most 2160h, 90 days)")
	// --ttl was the flag's first name; scripts that use it keep working
	// (hidden, not deprecated: cobra's deprecation notice would land in
	// the output scripts redirect into a token file).
	c.Flags().DurationVar(&ttl, "ttl", 30*24*time.Hour, "")
	_ = c.Flags().MarkHidden("ttl")
	c.Flags().StringVar(&label, "label", "", "a note stored with the token (where it is used)")
	return c
}

func (a *app) staffRevokeCmd() *cobra.Command {
	var staff string
	c := &cobra.Command{
		Use:   "revoke --staff ID",
		Short: "Revoke every codec-server token of a staff member",
		Long: `Revoke every live codec-server token of a staff member at once, and with
them the browser sessions opened with them (a lost
laptop, someone leaving the team; deactivating them in the staff table also
stops their tokens). Needs CARTWRIGHT_PG_ISSUER_DSN (the issuing role).`,
		Args: cobra.NoArgs,
		RunE: a.withStaffDB(&staff, func(ctx context.Context, pool *pgxpool.Pool) error {
			n, err := codecserver.RevokeTokens(ctx, pool, staff)
			if err != nil {
				return err
			}
			a.emit(map[string]any{"staff": staff, "revoked": n}, func(w io.Writer) { fmt.Fprintf(w, "%d token(s) of %s revoked\n", n, staff) })
			return nil
		}),
	}
	c.Flags().StringVar(&staff, "staff", "", "staff id")
	return c
}

// staffDB opens the application database as the issuing role
// (CARTWRIGHT_PG_ISSUER_DSN).
func (a *app) staffDB() (*pgxpool.Pool, func(), error) {
	ctx, cancel := a.ctxFor(0)
	defer cancel()
	return a.issuerDB(ctx)
}

// issuerDB opens the issuing role's pool (CARTWRIGHT_PG_ISSUER_DSN): staff
// tokens and MCP tokens are issued through it, never through the runtime
// role the worker and the gateway hold (docs/evidence.md#database-roles).
func (a *app) issuerDB(ctx context.Context) (*pgxpool.Pool, func(), error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	if cfg.IssuerDSN == "" {
		return nil, nil, toolkit.Errorf(toolkit.InvalidArgument,
			"CARTWRIGHT_PG_ISSUER_DSN is not set: staff and MCP tokens are issued as the issuing role (cartwright_issuer), "+
				"not the runtime role of CARTWRIGHT_PG_DSN (docs/operators.md#keys-and-grants-per-process)")
	}
	pool, err := db.Open(ctx, cfg.IssuerDSN)
	if err != nil {
		return nil, nil, toolkit.Errorf(toolkit.UpstreamError, "database: %v", err)
	}
	return pool, pool.Close, nil
}

// withStaffDB is a staff command's RunE: --staff given, the database open
// and a bounded context, then fn.
func (a *app) withStaffDB(staff *string, fn func(context.Context, *pgxpool.Pool) error) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		if *staff == "" {
			return usagef("--staff is required")
		}
		pool, closePool, err := a.staffDB()
		if err != nil {
			return err
		}
		defer closePool()
		ctx, cancel := a.ctxFor(0)
		defer cancel()
		return fn(ctx, pool)
	}
}
