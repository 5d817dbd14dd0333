package wire

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes (docs/mcp.md#error-codes). -32000
// (TOOL_EXECUTION_ERROR) says nothing a client can act on and is never
// produced: a tool's own failure is a tool
// result with isError, not a JSON-RPC error.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternal       int64 = -32603
	CodeDependency     int64 = -32001
	CodeBusiness       int64 = -32002
)

// Category is the closed set of error.data.category values
// (docs/mcp.md#error-codes).
type Category string

// The five categories; a code maps to exactly one (ERR-INV-02, MCP-INV-08).
const (
	CategoryProtocol   Category = "protocol"
	CategoryValidation Category = "validation"
	CategoryBusiness   Category = "business"
	CategoryDependency Category = "dependency"
	CategoryInternal   Category = "internal"
)

// Reason is an error.data.reason: upper-case with underscores, one closed
// list (MCP-INV-09). Adding one means adding it to reasons below.
type Reason string

// The reason constants (docs/mcp.md#reasons). Protocol and validation
// ones are JSON-RPC's and tools/call's; business ones name what the
// gateway refuses before a tool runs; the dependency ones name our
// dependencies (Temporal, PostgreSQL).
const (
	ReasonParseError           Reason = "PARSE_ERROR"
	ReasonInvalidRequest       Reason = "INVALID_REQUEST"
	ReasonRequestTooLarge      Reason = "REQUEST_TOO_LARGE"
	ReasonNestingTooDeep       Reason = "NESTING_TOO_DEEP"
	ReasonBatchNotSupported    Reason = "BATCH_NOT_SUPPORTED"
	ReasonMethodNotFound       Reason = "METHOD_NOT_FOUND"
	ReasonMissingRequiredParam Reason = "MISSING_REQUIRED_PARAM"
	ReasonInvalidParamType     Reason = "INVALID_PARAM_TYPE"
	ReasonInvalidParamValue    Reason = "INVALID_PARAM_VALUE"
	ReasonUnknownTool          Reason = "UNKNOWN_TOOL"
	ReasonAuthFailed           Reason = "AUTH_FAILED"
	ReasonActorUnknown         Reason = "ACTOR_UNKNOWN"
	ReasonPolicyReject         Reason = "POLICY_REJECT"
	ReasonTemporalUnavailable  Reason = "TEMPORAL_UNAVAILABLE"
	ReasonDatabaseUnavailable  Reason = "DATABASE_UNAVAILABLE"
	ReasonInternalError        Reason = "INTERNAL_ERROR"
	ReasonUnhandledPanic       Reason = "UNHANDLED_PANIC"
)

// reasonInfo is where a reason belongs: its code and whether retrying the
// same request can succeed.
type reasonInfo struct {
	code      int64
	retryable bool
}

// reasons is the closed list (MCP-INV-09): every constant above, each under
// one code, so its category follows (ERR-INV-03: unique per category).
var reasons = map[Reason]reasonInfo{
	ReasonParseError:           {CodeParseError, false},
	ReasonInvalidRequest:       {CodeInvalidRequest, false},
	ReasonRequestTooLarge:      {CodeInvalidRequest, false},
	ReasonNestingTooDeep:       {CodeInvalidRequest, false},
	ReasonBatchNotSupported:    {CodeInvalidRequest, false},
	ReasonMethodNotFound:       {CodeMethodNotFound, false},
	ReasonMissingRequiredParam: {CodeInvalidParams, false},
	ReasonInvalidParamType:     {CodeInvalidParams, false},
	ReasonInvalidParamValue:    {CodeInvalidParams, false},
	ReasonUnknownTool:          {CodeInvalidParams, false},
	ReasonAuthFailed:           {CodeBusiness, false},
	ReasonActorUnknown:         {CodeBusiness, false},
	ReasonPolicyReject:         {CodeBusiness, false},
	ReasonTemporalUnavailable:  {CodeDependency, true},
	ReasonDatabaseUnavailable:  {CodeDependency, true},
	ReasonInternalError:        {CodeInternal, false},
	ReasonUnhandledPanic:       {CodeInternal, false},
}

// categories maps each code to its one category (ERR-INV-02).
var categories = map[int64]Category{
	CodeParseError:     CategoryProtocol,
	CodeInvalidRequest: CategoryProtocol,
	CodeMethodNotFound: CategoryProtocol,
	CodeInvalidParams:  CategoryValidation,
	CodeBusiness:       CategoryBusiness,
	CodeDependency:     CategoryDependency,
	CodeInternal:       CategoryInternal,
}

// Reasons lists the closed set, sorted, for tests and docs/mcp.md#reasons.
func Reasons() []Reason {
	out := make([]Reason, 0, len(reasons))
	for r := range reasons {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// CodeOf is the JSON-RPC code of a reason, and CategoryOf its category.
func CodeOf(r Reason) int64          { return reasons[r].code }
func CategoryOf(code int64) Category { return categories[code] }

// ErrorData is error.data of every JSON-RPC error the gateway sends
// (MCP-INV-04): category, reason, retryable, correlation_id, details.
type ErrorData struct {
	Category          Category       `json:"category"`
	Reason            Reason         `json:"reason"`
	Retryable         bool           `json:"retryable"`
	CorrelationID     string         `json:"correlation_id"`
	RetryAfterSeconds int            `json:"retry_after_seconds,omitempty"`
	Details           map[string]any `json:"details,omitempty"`
}

// NewError builds the JSON-RPC error of reason, with data. An unlisted
// reason is a bug; it becomes INTERNAL_ERROR so the list stays closed.
func NewError(corr string, reason Reason, details map[string]any, format string, args ...any) *jsonrpc.Error {
	info, ok := reasons[reason]
	if !ok {
		details = map[string]any{"invalid_reason": string(reason)}
		reason, info = ReasonInternalError, reasons[ReasonInternalError]
	}
	data, _ := json.Marshal(ErrorData{
		Category: categories[info.code], Reason: reason, Retryable: info.retryable,
		CorrelationID: corr, Details: details,
	})
	return &jsonrpc.Error{Code: info.code, Message: fmt.Sprintf(format, args...), Data: data}
}
