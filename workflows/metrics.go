package workflows

// The product metrics the workflows count themselves, through
// workflow.GetMetricsHandler (the SDK skips them while replaying, so a
// replay or a worker restart counts nothing twice). Prometheus shows them
// with the suffix _total (docs/operators.md#observability).
const (
	// MetricDraftOrdersFinished counts draft orders by final state
	// (label state: a State* constant).
	MetricDraftOrdersFinished = "draft_orders_finished"
	// MetricReconcileViolations counts broken invariants found by the
	// reconcile passes.
	MetricReconcileViolations = "reconcile_violations"
)
