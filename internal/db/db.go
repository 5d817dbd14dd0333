package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver goose uses
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate brings the database at dsn up to the newest migration. It is safe
// to run concurrently from several workers: goose takes a session lock.
func Migrate(ctx context.Context, dsn string) error {
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		return fmt.Errorf("open database for migrations: %w", err)
	}
	defer sqlDB.Close()
	// Out of order: branches number their migrations in ranges of their
	// own, so a database may already hold a higher number when a lower one
	// lands (each migration stands on its own; 00100's grants cover tables
	// made before or after it).
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, mustSub(),
		goose.WithSessionLocker(mustLocker()), goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("run migrations: %w", err)
	}
	return nil
}

// Option tunes the pool Open builds.
type Option func(*pgxpool.Config)

// MaxConns sizes the pool. pgxpool's default (the larger of 4 and the core
// count) starves a worker that runs a draft order's parallel activities for
// many workflows at once; n <= 0 keeps whatever the DSN says.
func MaxConns(n int32) Option {
	return func(c *pgxpool.Config) {
		if n > 0 {
			c.MaxConns = n
		}
	}
}

// Open connects a pool to dsn and checks it answers.
func Open(ctx context.Context, dsn string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres dsn: %w", err)
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return pool, nil
}

func mustSub() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embed pattern above guarantees the folder exists
	}
	return sub
}

func mustLocker() lock.SessionLocker {
	l, err := lock.NewPostgresSessionLocker()
	if err != nil {
		panic(err) // only fails on invalid options, and we pass none
	}
	return l
}
