package codecserver

import (
	"errors"
	"html/template"
	"net/http"
	"strings"
)

// The Web UI cannot send a bearer token of ours (it passes only its own
// OIDC token), so a browser signs in here once: the staff token goes into
// an HttpOnly cookie scoped to /codec that the UI's codec requests carry
// when its codec settings include cross-origin credentials. The UI and the
// codec server must be same-site (e.g. both on localhost) for the cookie
// to travel (SameSite=Lax).
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cartwright codec sign-in</title></head>
<body style="font-family:sans-serif;max-width:36em;margin:3em auto">
<h1>cartwright codec server</h1>
{{if .Staff}}<p id="status">Signed in as <b>{{.Staff}}</b>. The Temporal Web UI now shows decoded payloads
(its Codec Server settings must include cross-origin credentials). Every decode is logged.</p>
{{else}}{{if .Error}}<p id="status" style="color:#b00">{{.Error}}</p>{{end}}
<form method="post" action="login">
<label>Staff token <input id="token" name="token" type="password" size="50" autocomplete="off"></label>
<button id="signin" type="submit">Sign in</button>
</form>
<p>Get a token with <code>starter staff token --staff YOUR_ID</code>.</p>{{end}}
</body></html>`))

type loginView struct{ Staff, Error string }

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodGet:
		_ = loginPage.Execute(w, loginView{})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		token := strings.TrimSpace(r.PostFormValue("token"))
		staff, err := s.auth.Authenticate(r.Context(), token)
		if err != nil {
			status, msg := http.StatusUnauthorized, "That token is not valid (unknown, expired, revoked, or its owner is inactive)."
			if !errors.Is(err, ErrBadCredential) {
				status, msg = http.StatusServiceUnavailable, "The credential check is unavailable; try again."
			}
			w.WriteHeader(status)
			_ = loginPage.Execute(w, loginView{Error: msg})
			return
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: PathPrefix, MaxAge: 12 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		_ = loginPage.Execute(w, loginView{Staff: staff})
	default:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	}
}
