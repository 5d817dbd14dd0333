package audit

import (
	"context"
	"errors"
	"fmt"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// Deps are what an audit reads from.
type Deps struct {
	// Temporal fetches histories and lists workflows; nil audits given
	// histories and the archive only.
	Temporal client.Client
	// Evidence is the evidence store (required).
	Evidence *evidence.Store
	// Archive is the fallback when the server no longer has a run; nil
	// disables the fallback.
	Archive *archive.Store
	// Workflows are the workflow functions by registered name; nil means
	// registry.Registry(Specs), what the worker registers. Tests swap in
	// changed code here.
	Workflows map[string]any
	// Specs are the tool specs the workflows are bound to (the worker
	// registry's); required when Workflows is nil.
	Specs []toolkit.Spec
	// DataConverter must be the worker's: the payload codec's
	// (client.SDKOptions; Open sets it). nil means the codec of the
	// configured key ring (CARTWRIGHT_PAYLOAD_KEYS), or without one the
	// SDK default, which reads only histories written without a codec.
	DataConverter converter.DataConverter
	// Reader names who reads archived histories (they hold PII, so every
	// read is logged with this name); "" means "audit".
	Reader string
	// Logger receives the replayer's log; nil discards it.
	Logger *zap.Logger
	// Seals verifies the seal of every recorded support-staff decision
	// again (docs/approvals.md#sealed-decisions); nil means the configured
	// ring (CARTWRIGHT_SEAL_KEYS), and without one seals are reported
	// unverifiable.
	Seals *support.SealRing
}

func (d Deps) withDefaults() (Deps, error) {
	if d.Evidence == nil {
		return d, errors.New("audit: an evidence store is required")
	}
	if d.Workflows == nil {
		if len(d.Specs) == 0 {
			return d, errors.New("audit: the tool specs (or the workflows) are required to replay")
		}
		d.Workflows = registry.Registry(d.Specs)
	}
	if d.DataConverter == nil {
		d.DataConverter = configuredConverter()
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Seals == nil {
		d.Seals = configuredSeals()
	}
	if d.Reader == "" {
		d.Reader = "audit"
	}
	return d, nil
}

// Target names the run to audit: a workflow id (and optionally a run id;
// "" is the current run on the server, or the last archived one), or a
// history already in hand. With a History, WorkflowID and RunID override
// what the history says about itself (older histories lack the workflow
// id; after a reset the history's run id is the original one).
type Target struct {
	WorkflowID string
	RunID      string
	History    *historypb.History
}

// ByID targets a run on the server (or in the archive).
func ByID(workflowID, runID string) Target { return Target{WorkflowID: workflowID, RunID: runID} }

// FromHistory targets a history already loaded, e.g. with ReadHistoryFile.
func FromHistory(h *historypb.History) Target { return Target{History: h} }

// Audit replays one run and checks its evidence. Findings are in the
// Report; the error is for an audit that could not run (server or database
// unreachable, run unknown everywhere, workflow type not registered).
func Audit(ctx context.Context, d Deps, t Target) (Report, error) {
	d, err := d.withDefaults()
	if err != nil {
		return Report{}, err
	}
	return auditRun(ctx, d, directReads{d.Evidence}, newReplayers(d), t)
}

// auditRun is Audit with d's defaults filled, its reads of PostgreSQL and
// its replayers given (AuditMany shares both among a batch of runs).
func auditRun(ctx context.Context, d Deps, r reads, rs *replayers, t Target) (Report, error) {
	rep := Report{Findings: []Finding{}, Activities: []ActivityCheck{}}
	h, err := load(ctx, d, t, &rep)
	if err != nil {
		return rep, err
	}
	if h == nil { // the history itself failed its check; see Findings
		return rep, nil
	}
	keys, err := missingKeys(ctx, h, d.DataConverter)
	if err != nil {
		return rep, err
	}
	if len(keys) > 0 { // nothing else can be read, so nothing else is said
		rep.Findings = keys
		return rep, nil
	}
	if err := replay(rs, h, &rep); err != nil {
		return rep, err
	}
	ev := scan(h, d.DataConverter)
	checks, err := checkActivities(ctx, d, r, ev, &rep)
	if err != nil {
		return rep, err
	}
	rep.Activities = checks
	if err := checkChain(ctx, r, ev, &rep); err != nil {
		return rep, err
	}
	if err := checkRows(ctx, d, r, h, ev, &rep); err != nil {
		return rep, err
	}
	rep.Clean = len(rep.Findings) == 0
	return rep, nil
}

// Exit codes of an audit (the starter CLI's contract).
const (
	ExitClean     = 0 // audited, nothing found
	ExitFindings  = 1 // audited, at least one finding
	ExitCannotRun = 2 // the audit could not run
)

// ExitCode maps an Audit result to the exit code. A history this key ring
// cannot decrypt could not be audited: ExitCannotRun, as for an error.
func ExitCode(r Report, err error) int {
	switch {
	case err != nil || r.lacksKey():
		return ExitCannotRun
	case !r.Clean:
		return ExitFindings
	}
	return ExitClean
}

// errf is an audit that cannot run.
func errf(format string, args ...any) error { return fmt.Errorf("audit: "+format, args...) }

// configuredConverter is the data converter of this process's payload key
// ring, as every client of the project is built with; the SDK default when
// no ring is configured (it still reads histories written without a codec).
func configuredConverter() converter.DataConverter {
	if cfg, err := config.Load(); err == nil {
		if c, err := codec.FromConfig(cfg); err == nil {
			return c.DataConverter()
		}
	}
	return converter.GetDefaultDataConverter()
}
