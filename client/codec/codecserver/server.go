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
	codec   *codec.Codec
	auth    Authenticator
	log     AccessLog
	origins []string
	logger  *zap.Logger
	inner   http.Handler
	seals   *support.SealRing
}

// Options are what New needs.
type Options struct {
	Codec *codec.Codec
	Auth  Authenticator
	Log   AccessLog
	// Origins are the Web UI origins CORS lets in (scheme://host:port).
	Origins []string
	Logger  *zap.Logger
	// Seals seals the approval decisions staff send
	// (docs/approvals.md#sealed-decisions); nil refuses to seal.
	Seals *support.SealRing
}

// New builds the handler.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return &Server{codec: o.Codec, auth: o.Auth, log: o.Log, origins: o.Origins, logger: o.Logger,
		inner: converter.NewPayloadCodecHTTPHandler(o.Codec), seals: o.Seals}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, PathPrefix+"/") {
		http.NotFound(w, r)
		return
	}
	s.cors(w, r)
	if r.URL.Path == LoginPath {
		s.login(w, r)
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
	staff, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if decode {
		if !s.logDecode(w, r, staff) {
			return
		}
	} else if !s.sealEncode(w, r, staff) {
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

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	token := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		token = h[7:]
	} else if c, err := r.Cookie(CookieName); err == nil {
		token = c.Value
	}
	staff, err := s.auth.Authenticate(r.Context(), token)
	if err != nil {
		status := http.StatusUnauthorized
		if !errors.Is(err, ErrBadCredential) {
			status = http.StatusServiceUnavailable
			s.logger.Error("codec server: credential check failed", zap.Error(err))
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="cartwright codec"`)
		http.Error(w, credentialRefusal(r), status)
		return "", false
	}
	return staff, true
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
