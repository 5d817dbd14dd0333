package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

type app struct {
	hydra       string
	usersFile   string
	groupsClaim string
	http        *http.Client
}

// user is one staff member of the directory file.
type user struct {
	Username string   `yaml:"username"`
	Password string   `yaml:"password"`
	Name     string   `yaml:"name"`
	Email    string   `yaml:"email"`
	Groups   []string `yaml:"groups"`
}

func (a *app) users() (map[string]user, error) {
	b, err := os.ReadFile(a.usersFile)
	if err != nil {
		return nil, err
	}
	var f struct {
		Users []user `yaml:"users"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", a.usersFile, err)
	}
	m := make(map[string]user, len(f.Users))
	for _, u := range f.Users {
		m[u.Username] = u
	}
	return m, nil
}

func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", a.loginForm)
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("GET /consent", a.consent)
	mux.HandleFunc("GET /logout", a.logout)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	return mux
}

var page = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
{{if .Error}}<p id="error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="challenge" value="{{.Challenge}}">
<label>User <input id="username" name="username" autocomplete="username" autofocus></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<button id="signin" type="submit">Sign in</button>
</form></body></html>`))

func (a *app) loginForm(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("login_challenge")
	var req struct {
		Skip    bool   `json:"skip"`
		Subject string `json:"subject"`
	}
	if err := a.admin(http.MethodGet, "login", challenge, nil, &req); err != nil {
		http.Error(w, "unknown or expired sign-in request", http.StatusBadRequest)
		return
	}
	if req.Skip {
		a.accept(w, r, "login", challenge, map[string]any{"subject": req.Subject})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, map[string]string{"Challenge": challenge})
}

func (a *app) login(w http.ResponseWriter, r *http.Request) {
	challenge := r.PostFormValue("challenge")
	users, err := a.users()
	if err != nil {
		log.Print(err)
		http.Error(w, "directory unavailable", http.StatusInternalServerError)
		return
	}
	u, ok := users[r.PostFormValue("username")]
	if !ok || u.Password == "" || subtle.ConstantTimeCompare([]byte(u.Password), []byte(r.PostFormValue("password"))) != 1 {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_ = page.Execute(w, map[string]string{"Challenge": challenge, "Error": "Wrong user or password."})
		return
	}
	a.accept(w, r, "login", challenge, map[string]any{"subject": u.Username, "remember": false})
}

// consent grants what the client asked for (every client of this provider
// is the organisation's own) and puts the user's groups, read from the
// directory now, into both tokens.
func (a *app) consent(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("consent_challenge")
	var req struct {
		Subject  string   `json:"subject"`
		Scope    []string `json:"requested_scope"`
		Audience []string `json:"requested_access_token_audience"`
	}
	if err := a.admin(http.MethodGet, "consent", challenge, nil, &req); err != nil {
		http.Error(w, "unknown or expired consent request", http.StatusBadRequest)
		return
	}
	users, err := a.users()
	if err != nil {
		http.Error(w, "directory unavailable", http.StatusInternalServerError)
		return
	}
	u, ok := users[req.Subject]
	if !ok {
		a.reject(w, r, "consent", challenge, "the user is no longer in the directory")
		return
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	a.accept(w, r, "consent", challenge, map[string]any{
		"grant_scope": req.Scope, "grant_access_token_audience": req.Audience, "remember": false,
		"session": map[string]any{
			"access_token": map[string]any{a.groupsClaim: groups},
			"id_token":     map[string]any{a.groupsClaim: groups, "name": u.Name, "email": u.Email},
		},
	})
}

func (a *app) logout(w http.ResponseWriter, r *http.Request) {
	a.accept(w, r, "logout", r.URL.Query().Get("logout_challenge"), nil)
}

// accept tells Hydra the flow's step is done and sends the browser on.
func (a *app) accept(w http.ResponseWriter, r *http.Request, flow, challenge string, body any) {
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := a.admin(http.MethodPut, flow+"/accept", challenge, body, &out); err != nil {
		log.Printf("%s accept: %v", flow, err)
		http.Error(w, "the provider refused", http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, out.RedirectTo, http.StatusFound)
}

func (a *app) reject(w http.ResponseWriter, r *http.Request, flow, challenge, why string) {
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := a.admin(http.MethodPut, flow+"/reject", challenge, map[string]any{"error": "access_denied", "error_description": why}, &out); err != nil {
		http.Error(w, "the provider refused", http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, out.RedirectTo, http.StatusFound)
}

// admin calls Hydra's admin API for one login, consent or logout request.
func (a *app) admin(method, path, challenge string, body, out any) error {
	kind, _, _ := strings.Cut(path, "/")
	u := a.hydra + "/admin/oauth2/auth/requests/" + path + "?" + url.Values{kind + "_challenge": {challenge}}.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}
