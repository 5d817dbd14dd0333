package audit

import "context"

// AuditReadingFirst audits t as AuditMany audits a run of a batch whose
// evidence was read before the run's history: the batch is read, between
// runs (the run may write more), then the run is audited from the batch.
func AuditReadingFirst(ctx context.Context, d Deps, t Target, between func()) (Report, error) {
	d, err := d.withDefaults()
	if err != nil {
		return Report{}, err
	}
	b := startBatch(ctx, d.Evidence, []string{t.WorkflowID})
	if err := b.wait(ctx); err != nil {
		return Report{}, err
	}
	between()
	return auditRun(ctx, d, b, newReplayers(d), t)
}
