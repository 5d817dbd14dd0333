package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/internal/db"
)

// The database roles of docs/evidence.md#database-roles, as the test
// clusters have them: scripts/lib.sh creates the same ones with the same
// passwords for the local stacks.
const (
	OwnerRole    = "cartwright_owner"
	RuntimeGroup = "cartwright_runtime"
	RuntimeRole  = "cartwright"
	// IssuingGroup holds the grants that change identities (staff, staff
	// tokens, MCP tokens); IssuerRole is its login, the one the operators'
	// `starter staff …` and `starter mcp token …` use.
	IssuingGroup = "cartwright_issuing"
	IssuerRole   = "cartwright_issuer"
)

// rolesSQL creates the roles if missing (roles are cluster-wide: every test
// database shares them). Neither login role is a superuser, creates roles
// or databases, or is a member of another.
var rolesSQL = []string{
	`CREATE ROLE ` + RuntimeGroup + ` NOLOGIN`,
	`CREATE ROLE ` + OwnerRole + ` LOGIN PASSWORD '` + OwnerRole + `'`,
	`CREATE ROLE ` + RuntimeRole + ` LOGIN PASSWORD '` + RuntimeRole + `'`,
	`CREATE ROLE ` + IssuingGroup + ` NOLOGIN`,
	`CREATE ROLE ` + IssuerRole + ` LOGIN PASSWORD '` + IssuerRole + `'`,
}

// EnsureRoles creates the owner, runtime and issuing roles on the cluster admin is
// connected to (as a superuser), and makes the runtime login a member of the
// runtime group. Safe to run concurrently from several test processes.
func EnsureRoles(ctx context.Context, admin *pgx.Conn) error {
	for _, q := range rolesSQL {
		if _, err := admin.Exec(ctx, q); err != nil && !roleExists(err) {
			return fmt.Errorf("create role: %w", err)
		}
	}
	if _, err := admin.Exec(ctx, `GRANT `+RuntimeGroup+` TO `+RuntimeRole); err != nil && !roleExists(err) {
		return fmt.Errorf("grant runtime group: %w", err)
	}
	if _, err := admin.Exec(ctx, `GRANT `+IssuingGroup+` TO `+IssuerRole); err != nil && !roleExists(err) {
		return fmt.Errorf("grant issuing group: %w", err)
	}
	return nil
}

// roleExists: the role (or membership) was made by someone else first; two
// test processes racing on pg_authid see a unique violation instead.
func roleExists(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42710" || pgErr.Code == "23505")
}

// PrepareDatabase creates database name on the cluster of adminDSN (a
// superuser's), owned by the owner role, migrates it as the owner (what
// `starter migrate` does) and returns the runtime role's DSN for it: what
// the worker and the gateway connect with.
func PrepareDatabase(ctx context.Context, adminDSN, name string) (string, error) {
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return "", fmt.Errorf("connect to postgres as admin (%s): %w", redact(adminDSN), err)
	}
	defer admin.Close(ctx)
	if err := EnsureRoles(ctx, admin); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+OwnerRole); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	if err := db.Migrate(ctx, DSNAs(adminDSN, OwnerRole, name)); err != nil {
		return "", fmt.Errorf("migrate as %s: %w", OwnerRole, err)
	}
	return DSNAs(adminDSN, RuntimeRole, name), nil
}

// DSNAs is dsn with its user (password = role name, as the test clusters
// have it) and database replaced.
func DSNAs(dsn, role, database string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(fmt.Sprintf("testenv: unparseable DSN: %v", err))
	}
	u.User = url.UserPassword(role, role)
	u.Path = "/" + database
	return u.String()
}

// DatabaseOf is the database name a DSN connects to.
func DatabaseOf(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		panic(fmt.Sprintf("testenv: unparseable DSN: %v", err))
	}
	return cfg.Database
}
