package onboardingflow

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// Names of the onboarding workflow type and its signals; the status query
// is QueryStatus ("status"), as for every cartwright workflow.
const (
	WorkflowName = "Onboarding"

	// SignalReturned: the merchant came back from Stripe's hosted
	// onboarding (return_url), or landed on refresh_url ({"refresh": true})
	// because the link expired or was used. Payload optional.
	SignalReturned = "returned"
	// SignalAccountUpdated: Stripe reported a change (the webhook receiver
	// sends {"event_id": "evt_…", "account_id": "acct_…"}).
	SignalAccountUpdated = "account_updated"
	// SignalDashboard: the merchant asked for the Express Dashboard; each
	// signal makes a new login link. Payload optional.
	SignalDashboard = "dashboard"
)

// Onboarding states (CartwrightState and Status.State).
const (
	StateReadingMerchant = "READING_MERCHANT"
	StateReadingAccount  = "READING_ACCOUNT"
	StateExplaining      = "EXPLAINING"
	// StateAwaitingMerchant: requirements are due and a relink URL is
	// out; waiting for returned or account_updated.
	StateAwaitingMerchant = "AWAITING_MERCHANT"
	// StateAwaitingStripe: nothing is due from the merchant but the
	// account is not enabled yet (Stripe is verifying).
	StateAwaitingStripe = "AWAITING_STRIPE"
	// Final states.
	StateOnboarded        = "ONBOARDED"
	StateDeadlineExceeded = "DEADLINE_EXCEEDED"
	StateMerchantNotFound = "MERCHANT_NOT_FOUND"
	StateNoStripeAccount  = "NO_STRIPE_ACCOUNT"
	StateFailed           = "FAILED"
)

// Defaults for values the input leaves zero. The workflow never reads
// configuration itself: starters copy it into the input, so a replay sees
// the values the original run saw.
const (
	DefaultDeadline         = 720 * time.Hour // config OnboardingDeadline
	DefaultStatusRetryDelay = time.Minute
	// DefaultContinueAsNewAfter: continue as new once the history holds
	// this many events (Temporal warns at 10 240 and the server may suggest
	// earlier, which is also honoured). A loop iteration costs about 15–40.
	DefaultContinueAsNewAfter = 2000
)

// Input starts (or, with State, continues) a merchant's
// onboarding. The workflow id must be ID(MerchantID).
type Input struct {
	MerchantID string `json:"merchant_id"`
	// Request is the envelope base of every tool call (actor, user_id,
	// request_id …); empty fields get system defaults.
	Request toolkit.Request `json:"request"`
	// Deadline ends an onboarding that never completes (default 720 h).
	Deadline time.Duration `json:"deadline,omitempty"`
	// ApprovalWindow bounds a support-staff review (default 24 h).
	ApprovalWindow time.Duration `json:"approval_window,omitempty"`
	// StatusRetryDelay is the wait before reading the account again after a
	// read failed through all its retries (default 1 min).
	StatusRetryDelay time.Duration `json:"status_retry_delay,omitempty"`
	// ContinueAsNewAfter is the history length (events) that triggers
	// continue-as-new (default 2000).
	ContinueAsNewAfter int `json:"continue_as_new_after,omitempty"`
	// State is set only by continue-as-new: the previous run's state.
	State *Progress `json:"state,omitempty"`
}

// Result is how an onboarding ended.
type Result struct {
	MerchantID      string `json:"merchant_id"`
	StripeAccountID string `json:"stripe_account_id,omitempty"`
	// State is the final state (ONBOARDED, DEADLINE_EXCEEDED, …).
	State          string `json:"state"`
	ChargesEnabled bool   `json:"charges_enabled"`
	PayoutsEnabled bool   `json:"payouts_enabled"`
	// Due lists what was still required when it ended.
	Due          []string      `json:"due"`
	Explanations []Explanation `json:"explanations"`
	Runs         int           `json:"runs"`
	StatusReads  int           `json:"status_reads"`
	LastError    *StepError    `json:"last_error,omitempty"`
}

// LinkRef is a relink URL or login link as the workflow keeps it: the URL
// itself is never here (it is a bearer secret), only its hash, expiry and
// the evidence snapshot from which stripetools.RevealLink returns it.
type LinkRef struct {
	Step       string    `json:"step"`
	SnapshotID string    `json:"snapshot_id"`
	URLSHA256  string    `json:"url_sha256"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Reused     bool      `json:"reused,omitempty"`
	// Consumed: the merchant came back after using it (or its refresh page
	// fired), so it must not be handed out again.
	Consumed bool `json:"consumed,omitempty"`
}

// Review states of an explanation.
const (
	ReviewNone     = ""         // grounded: shown without review
	ReviewQueued   = "queued"   // ungrounded, waiting to be sent to staff
	ReviewPending  = "pending"  // staff asked, no decision yet
	ReviewApproved = "approved" // staff approved showing it
	ReviewRejected = "rejected" // staff rejected it; the recovery applies
	ReviewExpired  = "expired"  // nobody decided in time; the recovery applies
	ReviewDropped  = "dropped"  // the onboarding ended before a decision
)

// Explanation is a cited explanation of one due requirement (or of the
// account's disabled reason).
type Explanation struct {
	Requirement string `json:"requirement"`
	// Kind is past_due, currently_due or disabled_reason.
	Kind      string               `json:"kind"`
	Claim     string               `json:"claim"`
	Grounded  bool                 `json:"grounded"`
	Citations []knowledge.Citation `json:"citations"`
	// Review is one of the Review* states; Shown says whether the merchant
	// may be shown the explanation (grounded, or approved by staff).
	Review string `json:"review,omitempty"`
	Shown  bool   `json:"shown"`
	// Recovery is what to tell the merchant when it is not shown.
	Recovery string                `json:"recovery,omitempty"`
	Evidence workflows.EvidenceRef `json:"evidence"`
}

// StepError is the last failure of a step the workflow survived.
type StepError struct {
	Step    string       `json:"step"`
	Code    toolkit.Code `json:"code"`
	Message string       `json:"message"`
	At      time.Time    `json:"at"`
}

// SignalCounts counts accepted signals.
type SignalCounts struct {
	Returned       int `json:"returned"`
	AccountUpdated int `json:"account_updated"`
	Dashboard      int `json:"dashboard"`
}

// Progress is the whole state of an onboarding; continue-as-new
// carries it into the next run.
type Progress struct {
	MerchantID string `json:"merchant_id"`
	// ChainID is the first run id of this onboarding; with the workflow id
	// it scopes idempotency keys (see onboardingKey).
	ChainID    string    `json:"chain_id"`
	StartedAt  time.Time `json:"started_at"`
	DeadlineAt time.Time `json:"deadline_at"`
	State      string    `json:"state"`
	Final      bool      `json:"final"`

	StripeAccountID string                     `json:"stripe_account_id,omitempty"`
	Merchant        *merchant.StatusSummary    `json:"merchant,omitempty"`
	Account         *stripetools.AccountStatus `json:"account,omitempty"`
	StatusReads     int                        `json:"status_reads"`
	// NeedRead: the account must be read (again) before acting; Fresh
	// bypasses the tool's cache (after a signal said something changed).
	NeedRead  bool `json:"need_read"`
	ReadFresh bool `json:"read_fresh"`
	// RetryReadAt is set after a failed read: read again then.
	RetryReadAt time.Time `json:"retry_read_at,omitempty"`

	Relink           *LinkRef  `json:"relink,omitempty"`
	RelinkSeq        int       `json:"relink_seq"`
	Logins           []LinkRef `json:"logins"`
	DashboardSeq     int       `json:"dashboard_seq"`
	PendingDashboard int       `json:"pending_dashboard"`

	Explanations []Explanation      `json:"explanations"`
	Decisions    []approval.Outcome `json:"decisions"`

	Signals    SignalCounts            `json:"signals"`
	SeenEvents []string                `json:"seen_events"`
	Log        workflows.SignalLog     `json:"log"`
	Evidence   []workflows.EvidenceRef `json:"evidence"`
	LastError  *StepError              `json:"last_error,omitempty"`
	// Runs counts the runs of this onboarding (1 + continue-as-new count).
	Runs int `json:"runs"`
}

// Status is the answer of the status query.
type Status struct {
	Progress
	Due      []string        `json:"due"`
	Approval approval.Status `json:"approval"`
}

// Bounds on lists kept in state, so a long onboarding cannot grow its
// continue-as-new payload without limit.
const (
	maxSeenEvents = 100
	maxLogins     = 10
	maxEvidence   = 100
)

// Flow is the onboarding bound to the specs of the tools it
// calls (its activity options come from the specs).
type Flow struct{ Specs flow.ToolSpecs }

// Run (registered as WorkflowName, "Onboarding") walks a merchant through Stripe Connect onboarding: it reads
// the merchant row and the account status; while requirements are due it
// hands out a relink URL, explains each requirement with citations (an
// ungrounded explanation goes to support staff first) and waits for the
// merchant to return or Stripe to report a change; it ends when the account
// can take charges and receive payouts, or at the deadline. The dashboard
// signal makes an Express Dashboard login link at any time. Long runs
// continue as new with their state, losing no signal.
func (b Flow) Run(ctx workflow.Context, in Input) (Result, error) {
	o, err := newOnboardingRun(ctx, in, b.Specs)
	if err != nil {
		return Result{}, err
	}
	return o.run(ctx)
}
