package activities_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/toolkit"
)

type nopCipher struct{}

func (nopCipher) KeyID() string                                 { return "k" }
func (nopCipher) Seal(p, _ []byte) ([]byte, []byte, error)      { return nil, p, nil }
func (nopCipher) Open(_ string, _, c, _ []byte) ([]byte, error) { return c, nil }

// TestArchiveFailureIsClosedSetCode: a failing pass (here the database is
// unreachable) leaves the activity as an ApplicationError whose type is a
// closed-set code, never a Go error type name.
func TestArchiveFailureIsClosedSetCode(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1&sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store, err := archive.NewStore(pool, nopCipher{})
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Archive{Store: store})
	_, err = env.ExecuteActivity((&activities.Archive{}).ArchiveClosedHistories, activities.ArchiveClosedHistoriesInput{})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an ApplicationError", err)
	}
	if !toolkit.Code(ae.Type()).Valid() {
		t.Fatalf("error type %q is not a closed-set code (%v)", ae.Type(), err)
	}
}
