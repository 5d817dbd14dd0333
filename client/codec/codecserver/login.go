package codecserver

import (
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// The Web UI cannot send a bearer token of ours (it passes only its own
// OIDC token), so a browser signs in here once with a staff token and gets
// a session (docs/support.md#codec-server-sign-in): an HttpOnly cookie
// scoped to /codec holding a random session id, never the token, which
// the UI's codec requests carry when its codec settings include
// cross-origin credentials. The UI and the codec server must be same-site
// (e.g. both on localhost) for the cookie to travel (SameSite=Lax).
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cartwright codec sign-in</title></head>
<body style="font-family:sans-serif;max-width:36em;margin:3em auto">
<h1>cartwright codec server</h1>
{{if .Staff}}<p id="status">Signed in as <b>{{.Staff}}</b>{{if .Until}} until {{.Until}}{{end}}. The Temporal Web UI now shows decoded payloads
(with its Codec Server settings as docs/support.md gives them: the browser setting, endpoint <code id="endpoint">{{.Endpoint}}</code>,
cross-origin credentials included). Every decode is logged.</p>
<form method="post" action="logout"><button id="signout" type="submit">Sign out</button></form>
{{else}}{{if .Error}}<p id="status" style="color:#b00">{{.Error}}</p>{{end}}
<form method="post" action="login">
<label>Staff token <input id="token" name="token" type="password" size="50" autocomplete="off"></label>
<button id="signin" type="submit">Sign in</button>
</form>
<p>Get a token with <code>starter staff token --staff YOUR_ID</code>.</p>{{end}}
</body></html>`))

type loginView struct{ Staff, Until, Endpoint, Error string }

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodGet:
		// Whoever is signed in in this browser is said, with the way to
		// sign out, on every visit, not only right after signing in.
		_ = loginPage.Execute(w, s.signedIn(r))
	case http.MethodPost:
		s.signIn(w, r)
	default:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	}
}

// signIn checks the posted staff token (throttled per client: see
// throttle.go) and opens a session for it.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	client := clientOf(r)
	if s.refuseThrottled(w, client) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	token := strings.TrimSpace(r.PostFormValue("token"))
	staff, err := s.auth.Authenticate(r.Context(), token)
	if err != nil {
		status, msg := http.StatusUnauthorized, "That token is not valid (unknown, expired, revoked, or its owner is inactive)."
		if errors.Is(err, ErrBadCredential) {
			s.throttle.fail(client)
			s.logger.Warn("codec sign-in refused", zap.String("client", client))
		} else {
			status, msg = http.StatusServiceUnavailable, "The credential check is unavailable; try again."
			s.logger.Error("codec server: credential check failed", zap.Error(err))
		}
		w.WriteHeader(status)
		_ = loginPage.Execute(w, loginView{Error: msg})
		return
	}
	sess, err := s.sessions.Open(r.Context(), staff, token)
	if err != nil {
		s.logger.Error("codec server: opening a session failed", zap.Error(err))
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = loginPage.Execute(w, loginView{Error: "The sign-in could not be stored; try again."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: sess.ID, Path: PathPrefix, Expires: sess.ExpiresAt,
		MaxAge: max(1, int(time.Until(sess.ExpiresAt).Seconds())), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	s.logger.Info("codec sign-in", zap.String("staff", staff), zap.String("session", SessionRef(sess.ID)),
		zap.Time("expires_at", sess.ExpiresAt))
	_ = loginPage.Execute(w, loginView{Staff: staff, Until: sess.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"),
		Endpoint: ownOrigin(r) + PathPrefix})
}

// logout revokes the browser's session and clears its cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if c, err := r.Cookie(CookieName); err == nil {
		if err := s.sessions.Revoke(r.Context(), c.Value); err != nil {
			s.logger.Error("codec server: sign-out failed", zap.Error(err))
			http.Error(w, "the sign-out could not be stored; try again", http.StatusServiceUnavailable)
			return
		}
		s.logger.Info("codec sign-out", zap.String("session", SessionRef(c.Value)))
	}
	clearSessionCookie(w, r)
	_ = loginPage.Execute(w, loginView{Error: "Signed out."})
}

func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: PathPrefix, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

// signedIn is the page of the browser's live session, if it has one.
func (s *Server) signedIn(r *http.Request) loginView {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return loginView{}
	}
	staff, err := s.sessions.Staff(r.Context(), c.Value)
	if err != nil {
		return loginView{}
	}
	return loginView{Staff: staff, Endpoint: ownOrigin(r) + PathPrefix}
}
