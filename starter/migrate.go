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
		Long: `Bring the database (CARTWRIGHT_PG_DSN) up to the newest migration and exit.
Workers migrate at start unless CARTWRIGHT_MIGRATE=false; a deployment with
many replicas runs this once instead (the Helm chart's migration Job), so a
rolling update never races schema changes. Safe to run concurrently: the
migrations hold a database lock.

Exit: 0 migrated (or already current), 2 could not run.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := config.Load()
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			ctx, cancel := a.ctxFor(migrateTimeout)
			defer cancel()
			if err := db.Migrate(ctx, cfg.PostgresDSN); err != nil {
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
