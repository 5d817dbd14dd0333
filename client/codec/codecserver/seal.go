package codecserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Sealed decisions (docs/approvals.md#sealed-decisions): the codec server
// is the one place that knows who signed in, so it writes the signed-in
// staff id into every approval decision it encodes and seals it. The Web
// UI's Signal form goes through /encode; `starter draft-order approve`
// asks /seal with the staff member's own token.

// SealPath answers POST {"approval_id", "decision", "reason"} with the
// decision sealed for the staff member whose bearer token came with it.
const SealPath = PathPrefix + "/seal"

const maxDecisionBytes = 16 << 10

// decisionPayload is an approval payload as staff type it into the Signal
// form: no approver (the signed-in staff member decides), no seal.
type decisionPayload struct {
	ApprovalID string          `json:"approval_id"`
	Decision   string          `json:"decision"`
	Reason     string          `json:"reason,omitempty"`
	Approver   string          `json:"approver,omitempty"`
	Seal       json.RawMessage `json:"seal,omitempty"`
}

// sealError is a refusal to seal, with the status the caller gets.
type sealError struct {
	status int
	msg    string
}

func (e *sealError) Error() string { return e.msg }

// serveSeal is POST /codec/seal.
func (s *Server) serveSeal(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a decision: {\"approval_id\", \"decision\", \"reason\"}", http.StatusMethodNotAllowed)
		return
	}
	staff, groups, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDecisionBytes))
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	sealed, err := s.sealPayload(r, staff, groups, data)
	if err != nil {
		writeSealError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(sealed)
}

// sealEncode seals, in an /encode request's payloads, every JSON object
// that is an approval decision (it has an approval_id) for staff, and
// hands the SDK's handler the body to encrypt. Other payloads pass as they
// are. false: the request was answered with the refusal.
func (s *Server) sealEncode(w http.ResponseWriter, r *http.Request, staff string, groups []string) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	var ps commonpb.Payloads
	if protojson.Unmarshal(data, &ps) != nil {
		return true // the SDK's handler answers what is not Payloads JSON
	}
	changed := false
	for _, p := range ps.GetPayloads() {
		if !isDecision(p) {
			continue
		}
		sealed, err := s.sealPayload(r, staff, groups, p.GetData())
		if err != nil {
			writeSealError(w, err)
			return false
		}
		if p.Data, err = json.Marshal(sealed); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return false
		}
		changed = true
	}
	if changed {
		out, err := protojson.Marshal(&ps)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(out))
	}
	return true
}

// isDecision: a JSON payload holding an object with an approval_id.
func isDecision(p *commonpb.Payload) bool {
	if string(p.GetMetadata()["encoding"]) != "json/plain" {
		return false
	}
	data := bytes.TrimSpace(p.GetData())
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return false
	}
	_, ok := fields["approval_id"]
	return ok
}

// sealPayload reads one decision as staff sent it and seals it for staff
// (with the groups of the provider's token, when it signed in with one).
func (s *Server) sealPayload(r *http.Request, staff string, groups []string, data []byte) (support.SealedDecision, error) {
	var d decisionPayload
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return support.SealedDecision{}, &sealError{http.StatusBadRequest,
			fmt.Sprintf(`not a decision (%v): send {"approval_id": "apr_…", "decision": "approve" or "reject", "reason": "…"}`, err)}
	}
	switch {
	case s.seals == nil:
		return support.SealedDecision{}, &sealError{http.StatusServiceUnavailable,
			"this codec server has no seal keys (CARTWRIGHT_SEAL_KEYS): it cannot seal decisions"}
	case staff == DevSecretReader:
		return support.SealedDecision{}, &sealError{http.StatusForbidden,
			"the dev secret decodes but cannot decide: sign in at " + loginURL(r) + " with your own staff token"}
	case len(d.Seal) > 0:
		return support.SealedDecision{}, &sealError{http.StatusBadRequest,
			"leave seal out: the codec server writes it for the signed-in staff member"}
	case d.Approver != "" && d.Approver != staff:
		return support.SealedDecision{}, &sealError{http.StatusForbidden, fmt.Sprintf(
			"you are signed in as %s: a decision is always the signed-in staff member's, leave approver out (or sign in as %s)",
			staff, safeID(d.Approver))}
	}
	sealed, err := s.seals.SealWithGroups(staff, groups, support.Decision{ApprovalID: d.ApprovalID, Decision: d.Decision, Reason: d.Reason})
	if err != nil {
		status := http.StatusBadRequest
		if toolkit.CodeOf(err) == toolkit.Unauthorized {
			status = http.StatusForbidden
		}
		return support.SealedDecision{}, &sealError{status, toolkit.AsError(err).Message}
	}
	s.logger.Info("codec seal", zap.String("staff", staff), zap.String("approval_id", sealed.ApprovalID),
		zap.String("decision", sealed.Decision), zap.String("seal_id", sealed.Seal.ID()),
		zap.String("seal_key_id", sealed.Seal.KeyID), zap.String("via", via(r)))
	return sealed, nil
}

func writeSealError(w http.ResponseWriter, err error) {
	var se *sealError
	if errors.As(err, &se) {
		http.Error(w, se.msg, se.status)
		return
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// safeID repeats a typed staff id only if it looks like one.
func safeID(s string) string {
	if support.StaffIDPattern.MatchString(s) {
		return s
	}
	return "that id"
}

// loginURL is the sign-in page of this codec server as the caller reached it.
func loginURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + LoginPath
}

// credentialRefusal is the text of a 401: where to sign in, and for an
// encode (the Web UI's Signal form) or a seal, why it matters.
func credentialRefusal(r *http.Request) string {
	if strings.HasSuffix(r.URL.Path, "/encode") || r.URL.Path == SealPath {
		return "not signed in: open " + loginURL(r) + " and sign in with your staff token (starter staff token --staff YOUR_ID), " +
			"then send again. The codec server writes your staff id into a decision and seals it; unsealed decisions are refused."
	}
	return "a valid staff credential is required: sign in at " + loginURL(r)
}

// SealClient obtains seals from a codec server's /codec/seal with a staff
// member's own token: what `starter draft-order approve|reject` uses, so
// the seal key stays on the server (docs/approvals.md#sealed-decisions).
type SealClient struct {
	// Endpoint is the codec server's endpoint, e.g. http://127.0.0.1:8089/codec.
	Endpoint string
	// Token is the staff token (cwst_…).
	Token string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

// SealDecision implements support.DecisionSealer.
func (c SealClient) SealDecision(ctx context.Context, d support.Decision) (support.SealedDecision, error) {
	var out support.SealedDecision
	if strings.TrimSpace(c.Token) == "" {
		return out, toolkit.Errorf(toolkit.Unauthorized,
			"a staff token is needed to decide: set CARTWRIGHT_STAFF_TOKEN or pass --token-file (get one with starter staff token --staff YOUR_ID)")
	}
	body, err := json.Marshal(d)
	if err != nil {
		return out, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	url := strings.TrimSuffix(c.Endpoint, "/") + "/seal"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return out, toolkit.Errorf(toolkit.InvalidArgument, "codec server endpoint %q: %v", c.Endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(c.Token))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return out, toolkit.Errorf(toolkit.UpstreamError, "the codec server at %s (CARTWRIGHT_CODEC_URL) does not answer: %v", c.Endpoint, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxDecisionBytes))
	if resp.StatusCode != http.StatusOK {
		code := toolkit.UpstreamError
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			code = toolkit.Unauthorized
		case http.StatusForbidden:
			code = toolkit.Forbidden
		case http.StatusBadRequest:
			code = toolkit.InvalidArgument
		case http.StatusTooManyRequests:
			code = toolkit.RateLimited
		}
		return out, toolkit.Errorf(code, "the codec server refused to seal the decision (%d): %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if err := json.Unmarshal(data, &out); err != nil || out.Seal == nil {
		return out, toolkit.Errorf(toolkit.UpstreamError, "the codec server's answer is not a sealed decision")
	}
	return out, nil
}
