package codecserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/support"
)

// Paths the server answers. The protocol only looks at the last element,
// so …/codec/encode and …/codec/decode are what the UI and CLI call for an
// endpoint of http://host:port/codec.
const (
	PathPrefix = "/codec"
	LoginPath  = PathPrefix + "/login"
	LogoutPath = PathPrefix + "/logout"
	CookieName = "cartwright_codec"
	// HeaderWorkflowID is an optional header our own tools send to name
	// the workflow being decoded (the Web UI only sends X-Namespace).
	HeaderWorkflowID = "X-Workflow-Id"
	maxBody          = 4 << 20
)

// AccessLog records a decode before the plaintext leaves the server.
type AccessLog interface {
	LogDecode(ctx context.Context, d Decode) error
}

// Decode is one logged decode request.
type Decode struct {
	Reader, Namespace, WorkflowID, Via string
	Payloads                           int
}

// PGAccessLog writes decodes to evidence_access_log (kind payload_decode).
type PGAccessLog struct{ Pool *pgxpool.Pool }

// LogDecode implements AccessLog.
func (l PGAccessLog) LogDecode(ctx context.Context, d Decode) error {
	_, err := l.Pool.Exec(ctx, `INSERT INTO evidence_access_log (kind, reader, reason, namespace, workflow_id)
		VALUES ('payload_decode', $1, $2, nullif($3, ''), nullif($4, ''))`,
		d.Reader, fmt.Sprintf("codec decode of %d payload(s) via %s", d.Payloads, d.Via), d.Namespace, d.WorkflowID)
	return err
}

// Server is the codec server's handler.
type Server struct {
	codec    *codec.Codec
	auth     Authenticator
	sessions Sessions
	throttle *throttle
	log      AccessLog
	origins  []string
	logger   *zap.Logger
	inner    http.Handler
	seals    *support.SealRing
	provider *ProviderTokens
}

// Options are what New needs.
type Options struct {
	Codec *codec.Codec
	Auth  Authenticator
	Log   AccessLog
	// Sessions stores browser sign-ins (default: in this process only).
	Sessions Sessions
	// Origins are the Web UI origins CORS lets in (scheme://host:port);
	// a request from any other origin is refused.
	Origins []string
	Logger  *zap.Logger
	// Now is the clock of the sign-in throttle (tests); default time.Now.
	Now func() time.Time
	// Seals seals the approval decisions staff send
	// (docs/approvals.md#sealed-decisions); nil refuses to seal.
	Seals *support.SealRing
	// Provider verifies staff access tokens of the organisation's OpenID
	// Connect provider (nil: only cartwright's staff tokens and sessions).
	Provider *ProviderTokens
}

// New builds the handler.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Sessions == nil {
		o.Sessions = &MemorySessions{}
	}
	return &Server{codec: o.Codec, auth: o.Auth, sessions: o.Sessions, throttle: newThrottle(o.Now), log: o.Log,
		origins: o.Origins, logger: o.Logger, inner: converter.NewPayloadCodecHTTPHandler(o.Codec), seals: o.Seals,
		provider: o.Provider}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, PathPrefix+"/") {
		http.NotFound(w, r)
		return
	}
	if !s.refuseForeignOrigin(w, r) {
		return
	}
	s.cors(w, r)
	switch r.URL.Path {
	case LoginPath:
		s.login(w, r)
		return
	case LogoutPath:
		s.logout(w, r)
		return
	}
	if r.Method == http.MethodOptions { // CORS preflight: no credential yet
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL.Path == SealPath {
		s.serveSeal(w, r)
		return
	}
	decode := strings.HasSuffix(r.URL.Path, "/decode")
	if r.Method != http.MethodPost || (!decode && !strings.HasSuffix(r.URL.Path, "/encode")) {
		http.NotFound(w, r)
		return
	}
	staff, groups, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if decode {
		if !s.logDecode(w, r, staff) {
			return
		}
	} else if !s.logEncode(w, r, staff) || !s.sealEncode(w, r, staff, groups) {
		return
	}
	s.inner.ServeHTTP(w, r)
}

// cors answers the Web UI's origin only; credentials (the login cookie) are
// allowed because the origin is never a wildcard.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || !slices.Contains(s.origins, origin) {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization, Authorization-Extras, "+HeaderWorkflowID)
	h.Set("Access-Control-Max-Age", "600")
	h.Add("Vary", "Origin")
}

// authenticate takes a bearer token — the provider's access token the Web
// UI passes (with the staff member's groups), or a cartwright staff token
// (the CLI) — or the sign-in session's cookie (the Web UI without a
// provider). A refused bearer token counts against the client's failed
// sign-ins; a stale session cookie is cleared instead (its id is random,
// nobody guesses one).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, []string, bool) {
	var staff string
	var groups []string
	var err error
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		client := clientOf(r)
		if s.refuseThrottled(w, client) {
			return "", nil, false
		}
		if s.provider != nil && isJWT(h[7:]) {
			staff, groups, err = s.provider.Verify(r.Context(), h[7:])
		} else {
			staff, err = s.auth.Authenticate(r.Context(), h[7:])
		}
		if errors.Is(err, ErrBadCredential) {
			s.throttle.fail(client)
			s.logger.Warn("codec bearer token refused", zap.String("client", client))
		}
	} else if c, cerr := r.Cookie(CookieName); cerr == nil {
		if staff, err = s.sessions.Staff(r.Context(), c.Value); errors.Is(err, ErrBadCredential) {
			clearSessionCookie(w, r)
		}
	} else {
		err = ErrBadCredential
	}
	if err != nil {
		status := http.StatusUnauthorized
		if !errors.Is(err, ErrBadCredential) {
			status = http.StatusServiceUnavailable
			s.logger.Error("codec server: credential check failed", zap.Error(err))
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="cartwright codec"`)
		http.Error(w, credentialRefusal(r), status)
		return "", nil, false
	}
	return staff, groups, true
}

// logDecode counts the payloads (the body is read again by the SDK's
// handler) and writes the access row; without the row there is no answer.
func (s *Server) logDecode(w http.ResponseWriter, r *http.Request, staff string) bool {
	body, n, err := countPayloads(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = body
	d := Decode{Reader: staff, Namespace: r.Header.Get("X-Namespace"), WorkflowID: r.Header.Get(HeaderWorkflowID),
		Via: via(r), Payloads: n}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.log.LogDecode(ctx, d); err != nil {
		s.logger.Error("codec server: access log write failed", zap.Error(err))
		http.Error(w, "access log unavailable", http.StatusServiceUnavailable)
		return false
	}
	s.logger.Info("codec decode", zap.String("reader", staff), zap.String("namespace", d.Namespace),
		zap.String("workflow_id", d.WorkflowID), zap.Int("payloads", n), zap.String("via", d.Via))
	return true
}

// logEncode logs who had payloads encoded (the Web UI encodes a signal's
// input, a query's arguments): an encoded payload is data a staff member
// put into a workflow, so the log names them.
func (s *Server) logEncode(w http.ResponseWriter, r *http.Request, staff string) bool {
	body, n, err := countPayloads(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = body
	s.logger.Info("codec encode", zap.String("staff", staff), zap.String("namespace", r.Header.Get("X-Namespace")),
		zap.String("workflow_id", r.Header.Get(HeaderWorkflowID)), zap.Int("payloads", n), zap.String("via", via(r)))
	return true
}

// via names the caller's kind for the log: the Web UI sends an Origin.
func via(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return "web ui " + o
	}
	if ua := r.UserAgent(); ua != "" {
		return "client " + ua
	}
	return "client"
}
