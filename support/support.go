package support

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// RecordApprovalTool is the tool's registered name.
const RecordApprovalTool = "support.record_approval"

// Decisions an approver can make.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// Staff roles (the CHECK of migration 00005_staff.sql).
const (
	RoleSupport    = "support"
	RoleCompliance = "compliance"
	RoleAdmin      = "admin"
	// RoleRefunds decides refunds above the approval threshold
	// (docs/payments.md#refunds; migration 00262).
	RoleRefunds = "refunds"
)

// Identifier shapes: a staff id (the CHECK of migration 00005_staff.sql) and
// an approval id ("apr_" and 16 hex digits, issued by the workflow).
var (
	StaffIDPattern    = regexp.MustCompile(`^[a-z][a-z0-9._-]{1,62}$`)
	ApprovalIDPattern = regexp.MustCompile(`^apr_[0-9a-f]{16}$`)
)

// RecordApprovalArgs is the tool's input (schemas/support.record_approval.input.json).
type RecordApprovalArgs struct {
	// Flow is the flow that asked, e.g. draft_order.
	Flow string `json:"flow"`
	// Subject says what is decided, without personal data.
	Subject string `json:"subject"`
	// ApprovalID is the request the decision answers.
	ApprovalID string `json:"approval_id"`
	// Decision is approve or reject.
	Decision string `json:"decision"`
	// Approver is the deciding staff member's id.
	Approver string `json:"approver"`
	// Reason says why; the workflow requires one for a rejection.
	Reason string `json:"reason,omitempty"`
	// AllowedRoles limits who may decide; empty means any active staff.
	AllowedRoles []string `json:"allowed_roles,omitempty"`
	// Seal authenticates the approver and the decision
	// (docs/approvals.md#sealed-decisions); without a valid one the
	// decision is refused UNAUTHORIZED.
	Seal *Seal `json:"seal,omitempty"`
}

// ApprovalRecord is the tool's output data
// (schemas/support.record_approval.output.json): the decision as recorded.
type ApprovalRecord struct {
	Flow          string `json:"flow"`
	Subject       string `json:"subject"`
	ApprovalID    string `json:"approval_id"`
	Decision      string `json:"decision"`
	Approver      string `json:"approver"`
	ApproverRole  string `json:"approver_role"`
	Reason        string `json:"reason,omitempty"`
	StaffVerified bool   `json:"staff_verified"`
	// Seal is the verified seal of the decision, with its id: the audit
	// verifies it again (docs/approvals.md#sealed-decisions).
	Seal *RecordedSeal `json:"seal,omitempty"`
}

// RecordedSeal is a verified seal as evidence keeps it: the seal, its id,
// and the digest of the reason it sealed (the record's reason may be
// redacted; SealRing.VerifyRecord).
type RecordedSeal struct {
	Seal
	SealID       string `json:"seal_id"`
	ReasonSHA256 string `json:"reason_sha256"`
}

// StaffMember is one row of the staff roster.
type StaffMember struct {
	ID     string
	Role   string
	Active bool
}

// Roster looks staff members up; found is false for an unknown id.
type Roster interface {
	Lookup(ctx context.Context, staffID string) (m StaffMember, found bool, err error)
}

// PGRoster reads the staff table of migration 00005_staff.sql.
type PGRoster struct{ Pool *pgxpool.Pool }

// Lookup implements Roster.
func (r PGRoster) Lookup(ctx context.Context, staffID string) (StaffMember, bool, error) {
	m := StaffMember{ID: staffID}
	err := r.Pool.QueryRow(ctx, `SELECT role, active FROM staff WHERE staff_id = $1`, staffID).Scan(&m.Role, &m.Active)
	if errors.Is(err, pgx.ErrNoRows) {
		return StaffMember{}, false, nil
	}
	if err != nil {
		return StaffMember{}, false, fmt.Errorf("read staff roster: %w", err)
	}
	return m, true, nil
}

// RecordApprovalSpec is the tool's contract. It reads only the roster, but
// what it records is a decision that moves a workflow on, so it is a write
// (not read-only: an MCP host must not treat it as safe to run unasked),
// idempotent per key; its record is the evidence snapshot the invoker
// writes, which is why evidence is mandatory. Version 2 verifies the
// decision's seal and records it; 1.x records (before sealed decisions)
// named a typed approver.
var RecordApprovalSpec = toolkit.Spec{
	Name:    RecordApprovalTool,
	Version: "2.0.0",
	Description: "Records a support-staff decision (approve or reject) on an approval request a workflow issued " +
		"when a human must decide. Use it when a staff member answers an approval signal. Succeeds when the decision " +
		"carries a valid seal (made by the codec server for the signed-in staff member) and that staff member is active " +
		"with a role allowed to decide the request; the returned record and its evidence snapshot are the audit trail. " +
		"Fails with UNAUTHORIZED for an unsealed, forged, altered or expired seal, NOT_FOUND for an approver missing " +
		"from the roster and FORBIDDEN for an inactive approver or a role not allowed to decide; sign in at the codec " +
		"server and send the decision from the Web UI (or starter draft-order approve) instead.",
	InputSchema:  "support.record_approval.input.json",
	OutputSchema: "support.record_approval.output.json",
	Annotations:  toolkit.Annotations{ReadOnly: false, Idempotent: true},
	TTL:          0,
	Timeout:      5 * time.Second,
	// It never answers CONFLICT; were it to, a decision is not retried.
	Retry: toolkit.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaxInterval: 10 * time.Second, MaxAttempts: 5,
		FinalCodes: []toolkit.Code{toolkit.Conflict}},
	EvidenceRequired: true,
	// A decision comes from a person, relayed by the workflow (system) or
	// entered directly (user); never from an agent.
	AllowedActors: []toolkit.ActorType{toolkit.ActorUser, toolkit.ActorSystem},
	Provider:      "postgres:staff",
}

// RegisterTools registers the support tools into reg, reading the roster
// from pool and verifying seals with seals.
func RegisterTools(reg *toolkit.Registry, pool *pgxpool.Pool, seals *SealRing) error {
	if seals == nil {
		return errors.New("support: RegisterTools needs the seal key ring (CARTWRIGHT_SEAL_KEYS)")
	}
	return reg.Register(RecordApprovalSpec, RecordApprovalHandler(PGRoster{Pool: pool}, seals))
}

// SignInHint is what to do instead of sending an unsealed decision.
const SignInHint = "sign in at the codec server (its /codec/login page) and send the decision from the Web UI " +
	"without an approver (the codec server writes your staff id and seals it), or run " +
	"`starter draft-order approve|reject WORKFLOW_ID` with your staff token"

// RecordApprovalHandler verifies the decision's seal with seals, checks the
// sealed approver against roster and returns the decision as the record
// to keep.
func RecordApprovalHandler(roster Roster, seals *SealRing) toolkit.Handler {
	return func(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
		var in RecordApprovalArgs
		if err := call.Bind(&in); err != nil {
			return nil, err
		}
		if in.Decision == DecisionReject && in.Reason == "" {
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "a rejection needs a reason").
				WithDetail("fields", []string{"reason"}).WithRecovery("send the decision again with a reason")
		}
		sealed := SealedDecision{ApprovalID: in.ApprovalID, Decision: in.Decision, Approver: in.Approver, Reason: in.Reason, Seal: in.Seal}
		if err := seals.Verify(sealed); err != nil {
			return nil, unauthenticated(in, err)
		}
		if len(in.Seal.Groups) > 0 {
			return groupDecision(in)
		}
		m, found, err := roster.Lookup(ctx, in.Approver)
		if err != nil {
			return nil, toolkit.FromUpstream("db_error", "check approver: %v", err).WithCause(err)
		}
		if !found {
			return nil, toolkit.Errorf(toolkit.NotFound, "approver %s is not on the staff roster", in.Approver).
				WithDetail("approver", in.Approver).
				WithRecovery("ask an active staff member listed in the staff table to decide")
		}
		if !m.Active {
			return nil, toolkit.Errorf(toolkit.Forbidden, "approver %s is no longer an active staff member", in.Approver).
				WithDetail("approver", in.Approver).
				WithRecovery("ask an active staff member to decide")
		}
		if !roleAllowed(m.Role, in.AllowedRoles) {
			return nil, toolkit.Errorf(toolkit.Forbidden, "%s has role %s, which may not decide this request (roles: %s)",
				in.Approver, m.Role, strings.Join(in.AllowedRoles, ", ")).
				WithDetail("approver", in.Approver).WithDetail("allowed_roles", in.AllowedRoles).
				WithRecovery("ask a staff member with role " + strings.Join(in.AllowedRoles, " or ") + " to sign in and decide")
		}
		return &toolkit.Output{Data: ApprovalRecord{
			Flow: in.Flow, Subject: in.Subject, ApprovalID: in.ApprovalID, Decision: in.Decision,
			Approver: m.ID, ApproverRole: m.Role, Reason: in.Reason, StaffVerified: true,
			Seal: &RecordedSeal{Seal: *in.Seal, SealID: in.Seal.ID(), ReasonSHA256: ReasonSHA256(in.Reason)},
		}}, nil
	}
}

// groupDecision records a decision whose seal carries the approver's
// groups from the organisation's provider (docs/operators.md#sign-in-on-the-cluster):
// the provider is the directory, so the role is the first staff role among
// the sealed groups that may decide; a member outside them is refused, and
// is let in once the provider puts them in the group (the next token).
func groupDecision(in RecordApprovalArgs) (*toolkit.Output, error) {
	role := ""
	for _, g := range in.Seal.Groups {
		if (g == RoleSupport || g == RoleCompliance || g == RoleAdmin) && roleAllowed(g, in.AllowedRoles) {
			role = g
			break
		}
	}
	if role == "" {
		return nil, toolkit.Errorf(toolkit.Forbidden, "%s is in the groups %s of the sign-in, none of which may decide this request (roles: %s)",
			in.Approver, strings.Join(in.Seal.Groups, ", "), strings.Join(in.AllowedRoles, ", ")).
			WithDetail("approver", in.Approver).WithDetail("allowed_roles", in.AllowedRoles).
			WithRecovery("ask a member of " + strings.Join(in.AllowedRoles, " or ") + " to sign in and decide")
	}
	return &toolkit.Output{Data: ApprovalRecord{
		Flow: in.Flow, Subject: in.Subject, ApprovalID: in.ApprovalID, Decision: in.Decision,
		Approver: in.Approver, ApproverRole: role, Reason: in.Reason, StaffVerified: true,
		Seal: &RecordedSeal{Seal: *in.Seal, SealID: in.Seal.ID(), ReasonSHA256: ReasonSHA256(in.Reason)},
	}}, nil
}

// unauthenticated is the refusal of a decision whose seal does not verify:
// its author is unknown, whatever name it carries.
func unauthenticated(in RecordApprovalArgs, err error) *toolkit.Error {
	problem := SealMalformed
	var se *SealError
	if errors.As(err, &se) {
		problem = se.Problem
	}
	msg := "the decision is not sealed by the codec server, so its author is unknown (a typed approver is not enough)"
	if problem != SealMissing {
		msg = "the decision's seal does not verify: " + err.Error()
	}
	e := toolkit.Errorf(toolkit.Unauthorized, "%s", msg).WithDetail("seal_problem", problem).WithRecovery(SignInHint)
	if in.Seal != nil {
		e = e.WithDetail("seal_id", in.Seal.ID())
	}
	return e
}

func roleAllowed(role string, allowed []string) bool {
	if len(allowed) == 0 {
		return true
	}
	for _, r := range allowed {
		if r == role {
			return true
		}
	}
	return false
}

// Specs are the support tools' specs, exactly as RegisterTools registers
// them.
func Specs() []toolkit.Spec { return []toolkit.Spec{RecordApprovalSpec} }
