# shellcheck shell=bash
# The cluster's OpenID Connect provider (docs/operators.md#sign-in-on-the-cluster):
# Ory Hydra v2.3.0 (built from its Go module in build/hydra) on the
# cluster's PostgreSQL (a database of its own), its configuration in
# deploy/hydra/, and the small login and consent app (build/hydra/loginapp)
# that stands in for the organisation's directory. Sourced by cluster-lib.sh.
#
# Ports (cluster_ports layout, base +): 22 Hydra public (the issuer),
# 23 Hydra admin, 24 the login and consent app.

# idp_load: the provider's ports, database and files (after load_cluster's
# variables).
idp_load() {
	IDP_PUBLIC_PORT=$((CLUSTER_BASE + 22)) IDP_ADMIN_PORT=$((CLUSTER_BASE + 23)) IDP_LOGIN_PORT=$((CLUSTER_BASE + 24))
	# The issuer is https with a certificate of the cluster's client CA
	# (ensure_certs: idp.crt); its admin API stays plain http on loopback.
	IDP_ISSUER="https://127.0.0.1:$IDP_PUBLIC_PORT"
	IDP_ADMIN="http://127.0.0.1:$IDP_ADMIN_PORT"
	IDP_JWKS="$IDP_ISSUER/.well-known/jwks.json"
	IDP_TOKEN_URL="$IDP_ISSUER/oauth2/token"
	IDP_GROUPS_CLAIM=groups
	IDP_DIR="$DATA_DIR/idp"
	IDP_DB=hydra_cluster_$CLUSTER_BASE IDP_DB_USER=hydra_cluster IDP_DB_PASSWORD=hydra_cluster
	# CLUSTER_AUTH=0: no provider, Temporal without an authorizer (as before
	# the provider came; a comparison's "off" side).
	CLUSTER_AUTH=${CLUSTER_AUTH:-1}
}

idp_on() { [ "$CLUSTER_AUTH" = 1 ]; }

idp_dsn() {
	# Hydra's pool (Ory's DSN parameters), counted in the cluster's
	# connection budget (cluster_pg_budget).
	echo "postgres://$IDP_DB_USER:$IDP_DB_PASSWORD@127.0.0.1:$PG_PORT/$IDP_DB?sslmode=disable&max_conns=$IDP_CONNS&max_idle_conns=$IDP_CONNS"
}

# idp_database: Hydra's own login and database (its migrations, not ours).
idp_database() {
	as_postgres psql -q -X -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres \
		-v u="$IDP_DB_USER" -v pw="$IDP_DB_PASSWORD" -v db="$IDP_DB" <<-'SQL'
			SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'u', :'pw')
			WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'u')
			\gexec
			SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'u')
			WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')
			\gexec
		SQL
}

# idp_forget_database: Hydra's database of an earlier cluster on these
# ports (another checkout, or a deleted .data/cluster) holds signing keys
# sealed with a system secret this cluster does not have; Hydra then
# refuses every token ("Could not ensure that signing keys ... exists").
# A new secret starts a new database: nothing in it outlives its secret
# (the clients are registered again at every up). DROP DATABASE refuses
# while a Hydra is connected to it.
idp_forget_database() {
	as_postgres psql -tA -X -p "$PG_PORT" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$IDP_DB'" | grep -q 1 || return 0
	log "a new provider secret: dropping Hydra's database $IDP_DB of an earlier cluster (its keys are sealed with another secret)"
	as_postgres psql -q -X -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres -c "DROP DATABASE \"$IDP_DB\"" ||
		die "could not drop $IDP_DB (a Hydra of another checkout still connected?)"
}

# hydra_exports: Hydra's environment (what deploy/hydra/hydra.yaml leaves
# to the cluster), exported into the calling subshell.
hydra_exports() {
	export DSN SECRETS_SYSTEM SERVE_PUBLIC_PORT=$IDP_PUBLIC_PORT SERVE_ADMIN_PORT=$IDP_ADMIN_PORT \
		SERVE_PUBLIC_TLS_ENABLED=true SERVE_PUBLIC_TLS_CERT_PATH="$TLS_DIR/idp.crt" SERVE_PUBLIC_TLS_KEY_PATH="$TLS_DIR/idp.key" \
		URLS_SELF_ISSUER=$IDP_ISSUER URLS_LOGIN=http://127.0.0.1:$IDP_LOGIN_PORT/login \
		URLS_CONSENT=http://127.0.0.1:$IDP_LOGIN_PORT/consent URLS_LOGOUT=http://127.0.0.1:$IDP_LOGIN_PORT/logout
	DSN=$(idp_dsn)
	SECRETS_SYSTEM=$(cat "$IDP_DIR/system.secret")
}

hydra_ready() { curl -fsS -o /dev/null --max-time 2 "$IDP_ADMIN/health/ready"; }
login_ready() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$IDP_LOGIN_PORT/healthz"; }

# idp_users: the directory, once: deploy/hydra/users.yaml with a generated
# password per user (owner-only).
idp_users() {
	[ -s "$IDP_DIR/users.yaml" ] && return 0
	local pw
	(umask 077 && : >"$IDP_DIR/users.yaml")
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		*"- username: "*)
			pw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
			printf '    password: %s\n' "$pw"
			;;
		esac
	done <"$ROOT/deploy/hydra/users.yaml" >"$IDP_DIR/users.yaml"
}

# idp_clients: the clients of deploy/hydra/clients.json, each with a secret
# of its own (IDP_DIR/<client>.secret), created or updated in Hydra.
idp_clients() {
	local n i id secret body code
	n=$(jq length "$ROOT/deploy/hydra/clients.json")
	for ((i = 0; i < n; i++)); do
		id=$(jq -r ".[$i].client_id" "$ROOT/deploy/hydra/clients.json")
		secret=$(secret_file "$IDP_DIR/$id.secret" sh -c 'head -c 32 /dev/urandom | base64 | tr -d "/+="')
		body=$(jq --arg s "$secret" --arg ui "http://localhost:$UI_PORT" \
			".[$i] | .client_secret = \$s | .redirect_uris = ((.redirect_uris // []) | map(sub(\"{{UI_URL}}\"; \$ui)))" \
			"$ROOT/deploy/hydra/clients.json")
		code=$(curl -sS -o "$LOG_DIR/idp-client.out" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
			--data "$body" "$IDP_ADMIN/admin/clients/$id")
		if [ "$code" = 404 ]; then
			code=$(curl -sS -o "$LOG_DIR/idp-client.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
				--data "$body" "$IDP_ADMIN/admin/clients")
		fi
		case $code in 2*) ;; *) die "registering client $id in Hydra: HTTP $code $(cat "$LOG_DIR/idp-client.out")" ;; esac
	done
	rm -f "$LOG_DIR/idp-client.out"
	log "provider clients: $(jq -r 'map(.client_id) | join(", ")' "$ROOT/deploy/hydra/clients.json")"
}

# idp_up: Hydra (migrated, serving) and the login app; safe to repeat.
idp_up() {
	idp_on || return 0
	mkdir -p "$IDP_DIR"
	chmod 700 "$IDP_DIR"
	if [ ! -s "$IDP_DIR/system.secret" ] && ! pid_alive hydra "$BIN/hydra"; then
		idp_forget_database
	fi
	secret_file "$IDP_DIR/system.secret" sh -c 'head -c 32 /dev/urandom | base64 | tr -d "/+="' >/dev/null
	idp_users
	if pid_alive hydra "$BIN/hydra"; then
		log "Hydra already running (pid $(cat "$PID_DIR/hydra.pid"))"
	else
		idp_database
		(hydra_exports && "$BIN/hydra" migrate sql up --read-from-env --yes >>"$LOG_DIR/hydra-migrate.log" 2>&1) ||
			die "hydra migrate failed; see $LOG_DIR/hydra-migrate.log"
		# Production mode (no --dev): an https issuer, Secure cookies,
		# redirect URIs https or loopback only (docs/operators.md#sign-in-on-the-cluster);
		# --sqa-opt-out: Hydra sends no usage reports anywhere.
		(hydra_exports && start_bg hydra "$BIN/hydra" serve all --sqa-opt-out --config "$ROOT/deploy/hydra/hydra.yaml")
	fi
	wait_until 90 "Hydra ($IDP_ISSUER)" hydra_ready || { tail -n 20 "$LOG_DIR/hydra.log" >&2; die "Hydra did not come up; log above"; }
	if pid_alive idp-login "$BIN/cartwright-idp-login"; then
		log "login and consent app already running (pid $(cat "$PID_DIR/idp-login.pid"))"
	else
		(export IDP_LOGIN_ADDR="127.0.0.1:$IDP_LOGIN_PORT" IDP_HYDRA_ADMIN="$IDP_ADMIN" IDP_USERS_FILE="$IDP_DIR/users.yaml" \
			IDP_GROUPS_CLAIM="$IDP_GROUPS_CLAIM" && start_bg idp-login "$BIN/cartwright-idp-login")
	fi
	wait_until 30 "login app (:$IDP_LOGIN_PORT)" login_ready || { tail -n 20 "$LOG_DIR/idp-login.log" >&2; die "the login app did not come up"; }
	idp_clients
}

idp_down() {
	stop_pid idp-login "$BIN/cartwright-idp-login"
	stop_pid hydra "$BIN/hydra"
}

idp_status() {
	local n
	for n in hydra:$BIN/hydra idp-login:$BIN/cartwright-idp-login; do
		if pid_alive "${n%%:*}" "${n#*:}"; then echo "${n%%:*}: running (pid $(cat "$PID_DIR/${n%%:*}.pid"))"; else echo "${n%%:*}: down"; fi
	done
}

# idp_client_env CLIENT: the environment one program needs to fetch its own
# token (client credentials; client.SDKOptions refreshes it), and the
# cluster's client CA, which signed the provider's https certificate
# (trusted for the calls to the provider only).
idp_client_env() {
	idp_on || return 0
	cat <<-EOT
		export CARTWRIGHT_OIDC_TOKEN_URL='$IDP_TOKEN_URL'
		export CARTWRIGHT_OIDC_CLIENT_ID='$1'
		export CARTWRIGHT_OIDC_CLIENT_SECRET_FILE='$IDP_DIR/$1.secret'
		export CARTWRIGHT_OIDC_CA_FILE='$TLS_DIR/ca.crt'
	EOT
}

# idp_server_exports: what cartwright's authorizer in temporal-server reads
# (build/tools/temporalserver), exported into the calling subshell, and
# the cluster's client CA beside the system's for the provider's https
# JWKS (SSL_CERT_FILE: Temporal's key provider has no CA setting of its
# own; Go still reads the system's certificate folder; the server's own
# TLS names its CA files).
idp_server_exports() {
	export SSL_CERT_FILE="$TLS_DIR/ca.crt" \
		CARTWRIGHT_TEMPORAL_POLICY="$ROOT/deploy/temporal/authorization.yaml" CARTWRIGHT_OIDC_ISSUER="$IDP_ISSUER" \
		CARTWRIGHT_OIDC_GROUPS_CLAIM="$IDP_GROUPS_CLAIM" CARTWRIGHT_TEMPORAL_INTERNODE_CN=temporal-internode \
		CARTWRIGHT_TEMPORAL_INTERNODE_CA_CN="cartwright cluster internode CA"
}
