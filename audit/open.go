package audit

import (
	"context"
	"fmt"

	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// OpenStores opens what an audit reads, the way the worker wires itself:
// PostgreSQL from CARTWRIGHT_PG_DSN, the evidence store, the history
// archive with the evidence key (CARTWRIGHT_EVIDENCE_KEY), and the seal key
// ring when there is one (without it the audit still runs, and says which
// seals it could not check: KindSealUnverifiable). Errors carry their code:
// UPSTREAM_ERROR for the database, INVALID_ARGUMENT for a key or setting.
// close releases the database.
func OpenStores(ctx context.Context, cfg config.Config, logger *zap.Logger) (d Deps, close func(), err error) {
	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		return Deps{}, nil, toolkit.Errorf(toolkit.UpstreamError, "evidence database: %v", err)
	}
	fail := func(what string, err error) (Deps, func(), error) {
		pool.Close()
		return Deps{}, nil, toolkit.Errorf(toolkit.InvalidArgument, "%s: %v", what, err)
	}
	store, err := evidence.NewStoreFromConfig(pool, cfg, logger)
	if err != nil {
		return fail("evidence store", err)
	}
	sealer, err := evidence.NewAESGCMFromBase64(cfg.EvidenceKeyID, cfg.EvidenceKey)
	if err != nil {
		return fail("history archive key", err)
	}
	arch, err := archive.NewStore(pool, sealer)
	if err != nil {
		return fail("history archive", err)
	}
	d = Deps{Evidence: store, Archive: arch}
	if seals, err := support.SealRingFromConfig(cfg); err == nil {
		d.Seals = seals
	}
	return d, pool.Close, nil
}

// Open is OpenStores with Temporal from the standard TEMPORAL_* environment
// and the replayer with the clients' data converter (the payload codec of
// CARTWRIGHT_PAYLOAD_KEYS). The Temporal client is lazy — it connects on
// first use — so auditing a history file needs no server. specs are the
// tool specs the replayed workflows are bound to (the worker registry's;
// wiring.ToolSpecs()).
func Open(ctx context.Context, cfg config.Config, specs []toolkit.Spec, logger *zap.Logger) (d Deps, close func(), err error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	d, closeStores, err := OpenStores(ctx, cfg, logger)
	if err != nil {
		return Deps{}, nil, err
	}
	opts, err := client.SDKOptions(cfg, logger)
	if err != nil {
		closeStores()
		return Deps{}, nil, err
	}
	tc, err := sdkclient.NewLazyClient(opts)
	if err != nil {
		closeStores()
		return Deps{}, nil, fmt.Errorf("temporal client: %w", err)
	}
	d.Temporal, d.Logger, d.Specs, d.DataConverter = tc, logger, specs, opts.DataConverter
	return d, func() { tc.Close(); closeStores() }, nil
}
