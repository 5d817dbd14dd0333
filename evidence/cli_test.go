package evidence

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

func TestRunReconcileCLIExitCodes(t *testing.T) {
	dsn := testenv.Database(t)
	cfg := config.Config{PostgresDSN: dsn, LogLevel: "error", ReconcilePendingAfter: 2 * time.Hour}
	ctx := ctxT(t)
	var out, errOut bytes.Buffer

	if code := RunReconcileCLI(ctx, cfg, nil, &out, &errOut); code != ExitOK {
		t.Fatalf("empty database: exit %d, stderr %s", code, errOut.String())
	}

	_, pool := newTestStore(t) // a second database, to seed
	seedAudit(t, pool, 1, "pending", 3*time.Hour, `{}`)
	seedAudit(t, pool, 2, "success", time.Hour, `{}`) // no snapshot: a violation
	cfg.PostgresDSN = pool.Config().ConnString()
	out.Reset()
	if code := RunReconcileCLI(ctx, cfg, []string{"-pending-after", "90m"}, &out, &errOut); code != ExitViolations {
		t.Fatalf("violations: exit %d, stderr %s", code, errOut.String())
	}
	var rep ReconcileReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.MarkedFailed != 1 || rep.SuccessWithoutSnapshot != 1 ||
		rep.PendingAfterSeconds != 5400 {
		t.Fatalf("report %s (%v)", out.String(), err)
	}

	if code := RunReconcileCLI(ctx, cfg, []string{"-pending-after", "10s"}, &out, &errOut); code != ExitCannotRun {
		t.Fatalf("threshold below the floor: exit %d", code)
	}
	cfg.PostgresDSN = "postgres://nobody:nothing@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
	if code := RunReconcileCLI(ctx, cfg, nil, &out, &errOut); code != ExitCannotRun {
		t.Fatalf("unreachable database: exit %d", code)
	}
}
