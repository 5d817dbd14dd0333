package main

import (
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
)

// registerCommerce registers the six commerce tools into the shared
// registry and the Commerce activities on w. Draft orders use the evidence
// store's two-phase audit; shipping addresses are sealed with the evidence
// key (bound to each draft id as associated data, so a ciphertext cannot
// be passed off as another row's or as evidence).
func registerCommerce(w worker.Worker, d *Deps) error {
	sealer, err := evidence.NewAESGCMFromBase64(d.Config.EvidenceKeyID, d.Config.EvidenceKey)
	if err != nil {
		return err
	}
	if err := commerce.RegisterTools(d.Registry, commerce.ToolDeps{Pool: d.Pool, Audit: d.Evidence, Sealer: sealer}); err != nil {
		return err
	}
	w.RegisterActivity(&activities.Commerce{Invoker: d.Invoker})
	return nil
}
