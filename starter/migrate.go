package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// migrateTimeout bounds one migration run; --timeout adds to it.
const migrateTimeout = 2 * time.Minute

func (a *app) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database up to the newest migration, then exit",
		Long: `Bring the database up to the newest migration and exit, connected as the
schema owner (CARTWRIGHT_PG_OWNER_DSN). Workers and the MCP gateway never
migrate: they connect (CARTWRIGHT_PG_DSN) as a runtime role that owns nothing
and may not change the schema (docs/evidence.md#database-roles). Run this
before starting them, once per release (the Helm chart's migration Job). Safe
to run concurrently: the migrations hold a database lock.

Exit: 0 migrated (or already current), 2 could not run.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := config.Load()
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			if cfg.OwnerDSN == "" {
				return toolkit.Errorf(toolkit.InvalidArgument,
					"CARTWRIGHT_PG_OWNER_DSN is not set: migrations run as the schema owner, never as the runtime role of CARTWRIGHT_PG_DSN (docs/evidence.md#database-roles)")
			}
			ctx, cancel := a.ctxFor(migrateTimeout)
			defer cancel()
			if err := db.Migrate(ctx, cfg.OwnerDSN); err != nil {
				return toolkit.Errorf(toolkit.UpstreamError, "%v", err)
			}
			out := struct {
				Migrated bool `json:"migrated"`
			}{true}
			a.emit(out, func(w io.Writer) { fmt.Fprintln(w, "database migrated") })
			return nil
		},
	}
}
