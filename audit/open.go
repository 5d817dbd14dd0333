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

// Open builds Deps the way the worker wires itself, for the starter CLI:
// PostgreSQL from CARTWRIGHT_PG_DSN, the evidence store and the archive
// with the evidence key (CARTWRIGHT_EVIDENCE_KEY), Temporal from the
// standard TEMPORAL_* environment, and the replayer with the clients' data
// converter (the payload codec of CARTWRIGHT_PAYLOAD_KEYS). The Temporal client is lazy — it
// connects on first use — so auditing a history file needs no server.
// close releases everything. specs are the tool specs the replayed
// workflows are bound to (the worker registry's; wiring.ToolSpecs()).
func Open(ctx context.Context, cfg config.Config, specs []toolkit.Spec, logger *zap.Logger) (d Deps, close func(), err error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		return Deps{}, nil, err
	}
	store, err := evidence.NewStoreFromConfig(pool, cfg, logger)
	if err != nil {
		pool.Close()
		return Deps{}, nil, err
	}
	sealer, err := evidence.NewAESGCMFromBase64(cfg.EvidenceKeyID, cfg.EvidenceKey)
	if err != nil {
		pool.Close()
		return Deps{}, nil, err
	}
	arch, err := archive.NewStore(pool, sealer)
	if err != nil {
		pool.Close()
		return Deps{}, nil, err
	}
	opts, err := client.SDKOptions(cfg, logger)
	if err != nil {
		pool.Close()
		return Deps{}, nil, err
	}
	tc, err := sdkclient.NewLazyClient(opts)
	if err != nil {
		pool.Close()
		return Deps{}, nil, fmt.Errorf("temporal client: %w", err)
	}
	d = Deps{Temporal: tc, Evidence: store, Archive: arch, Logger: logger, Specs: specs, DataConverter: opts.DataConverter}
	// Without a seal key ring the audit still runs, and says which seals
	// it could not check (KindSealUnverifiable).
	if seals, err := support.SealRingFromConfig(cfg); err == nil {
		d.Seals = seals
	}
	return d, func() { tc.Close(); pool.Close() }, nil
}
