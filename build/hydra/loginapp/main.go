// Command cartwright-idp-login is the login and consent app of the
// cluster's OpenID Connect provider (Ory Hydra; docs/operators.md#sign-in-on-the-cluster):
// it stands in for an organisation's own directory. Hydra sends a browser
// here to sign in; the app checks the user's password against the users
// file, tells Hydra the subject, and on consent puts the user's groups into
// the tokens' groups claim. It issues and signs nothing: Hydra does.
//
// It is small on purpose and replaceable: in production the organisation's
// provider (its directory, its groups) takes the place of Hydra and of this
// app, and cartwright only reads the issuer, its JWKS and the groups claim.
//
// Environment:
//
//	IDP_LOGIN_ADDR     listen address (127.0.0.1:7424)
//	IDP_HYDRA_ADMIN    Hydra's admin API (http://127.0.0.1:7423)
//	IDP_USERS_FILE     the directory: users, their groups and passwords;
//	                   read again on every sign-in, so a group added there
//	                   is in the next token
//	IDP_GROUPS_CLAIM   the claim carrying the groups (groups)
package main

import (
	"cmp"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	app := &app{
		hydra:       cmp.Or(os.Getenv("IDP_HYDRA_ADMIN"), "http://127.0.0.1:7423"),
		usersFile:   os.Getenv("IDP_USERS_FILE"),
		groupsClaim: cmp.Or(os.Getenv("IDP_GROUPS_CLAIM"), "groups"),
		http:        &http.Client{Timeout: 10 * time.Second},
	}
	if app.usersFile == "" {
		log.Fatal("IDP_USERS_FILE is empty")
	}
	if _, err := app.users(); err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: cmp.Or(os.Getenv("IDP_LOGIN_ADDR"), "127.0.0.1:7424"), Handler: app.routes(),
		ReadHeaderTimeout: 10 * time.Second}
	log.Printf("login and consent app on http://%s (Hydra admin %s)", srv.Addr, app.hydra)
	log.Fatal(srv.ListenAndServe())
}
