# shellcheck shell=bash
# The Temporal cluster of scripts/cluster.sh (docs/operators.md#a-temporal-cluster-make-cluster).
# Sourced after lib.sh, never executed.
# shellcheck source=scripts/cluster-idp.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster-idp.sh"

# The four services of Temporal's server, each its own process.
TEMPORAL_SERVICES=(history matching frontend worker)
# The schema versions temporal-sql-tool embeds for the postgres12 plugin.
SQL_SCHEMA=postgresql/v12/temporal
SQL_VIS_SCHEMA=postgresql/v12/visibility

# load_cluster: where this cluster lives and its ports, from CLUSTER_DIR,
# CLUSTER_PORT_BASE and CLUSTER_PG (see cluster.sh). The port layout, base
# + offset:
#   0 frontend gRPC (TLS)       1 frontend HTTP (TLS)     2 history gRPC
#   3 matching gRPC             4 worker gRPC             5-8 membership
#   9-12 Prometheus of frontend, history, matching, worker
#   13 private PostgreSQL       14 stripe-mock            15 Web UI
#   16 codec server             17 MCP gateway            18 Stripe webhook
#   19 worker metrics           20 MCP metrics            21 worker health
#   22 OpenID provider (Hydra public, the issuer)          23 Hydra admin
#   24 the provider's login and consent app (cluster-idp.sh)
load_cluster() {
	PROFILE=cluster
	DATA_DIR=${CLUSTER_DIR:-$ROOT/.data/cluster}
	case $DATA_DIR in /*) ;; *) DATA_DIR="$ROOT/$DATA_DIR" ;; esac
	CLUSTER_BASE=${CLUSTER_PORT_BASE:-7400}
	CLUSTER_PG=${CLUSTER_PG:-shared}
	local b=$CLUSTER_BASE
	FRONTEND_PORT=$b FRONTEND_HTTP_PORT=$((b + 1))
	declare -gA GRPC_PORT=([frontend]=$b [history]=$((b + 2)) [matching]=$((b + 3)) [worker]=$((b + 4)))
	declare -gA MEMBER_PORT=([frontend]=$((b + 5)) [history]=$((b + 6)) [matching]=$((b + 7)) [worker]=$((b + 8)))
	declare -gA PROM_PORT=([frontend]=$((b + 9)) [history]=$((b + 10)) [matching]=$((b + 11)) [worker]=$((b + 12)))
	TEMPORAL_PORT=$FRONTEND_PORT
	STRIPE_PORT=$((b + 14)) UI_PORT=$((b + 15)) CODEC_PORT=$((b + 16))
	MCP_ADDR=127.0.0.1:$((b + 17)) WEBHOOK_ADDR=127.0.0.1:$((b + 18))
	METRICS_ADDR=127.0.0.1:$((b + 19)) MCP_METRICS_ADDR=127.0.0.1:$((b + 20))
	HEALTH_ADDR=127.0.0.1:$((b + 21))
	case $CLUSTER_PG in
	shared) ;;
	private)
		PG_PORT=$((b + 13))
		# Trust over TCP on 127.0.0.1 for the private cluster's postgres
		# user: psql (ensure_pg_roles runs it as the postgres OS user)
		# goes over TCP instead of Debian's socket folder.
		export PGHOST=127.0.0.1
		;;
	*) die "CLUSTER_PG=$CLUSTER_PG: want shared or private" ;;
	esac
	# Connection budget: every connection the cluster's processes may open
	# to PostgreSQL, at most its max_connections (check_pg_budget). Shared,
	# the project's PostgreSQL (max_connections 100) serves every other
	# stack too, so the cluster takes 60; private, its own (300) 200. Each
	# Temporal service gets a tenth for its store and a twentieth for
	# visibility, the provider (Hydra) a twentieth, and cartwright's worker
	# and MCP gateway half the rest each
	# (docs/operators.md#a-temporal-cluster-make-cluster).
	if [ "$CLUSTER_PG" = private ]; then CLUSTER_PG_CONNS=${CLUSTER_PG_CONNS:-200}; else CLUSTER_PG_CONNS=${CLUSTER_PG_CONNS:-60}; fi
	STORE_CONNS=$((CLUSTER_PG_CONNS / 10)) VIS_CONNS=$((CLUSTER_PG_CONNS / 20)) IDP_CONNS=$((CLUSTER_PG_CONNS / 20))
	[ "$VIS_CONNS" -ge 2 ] || die "CLUSTER_PG_CONNS=$CLUSTER_PG_CONNS: want at least 40"
	APP_CONNS=$(((CLUSTER_PG_CONNS - 4 * (STORE_CONNS + VIS_CONNS) - IDP_CONNS) / 2))
	# Every line this script logs carries the time, so a restart's
	# duration can be read off its output.
	LOG_TIMES=1
	# Database names: per port base, so several clusters can share the
	# project's PostgreSQL.
	TDB=temporal_cluster_$b TVDB=temporal_cluster_${b}_visibility APP_DB=cartwright_cluster_$b
	TDB_USER=temporal_cluster TDB_PASSWORD=temporal_cluster
	PID_DIR="$DATA_DIR/pids" LOG_DIR="$DATA_DIR/logs" ENV_FILE="$DATA_DIR/env"
	TLS_DIR="$DATA_DIR/tls" CONF_DIR="$DATA_DIR/config" CBIN="$DATA_DIR/bin"
	mkdir -p "$PID_DIR" "$LOG_DIR" "$CONF_DIR" "$CBIN"
	idp_load
	# The private PostgreSQL runs as the postgres OS user and must reach
	# its folder: the cluster folder is traversable (711), every secret in
	# it owner-only (600), the certificate folder 700.
	chmod 711 "$DATA_DIR"
}

# ------------------------------------------------------------- binaries

# ensure_cluster_tools: temporal-server, temporal-sql-tool and the Web UI
# server (build/tools/go.mod) in .bin/, built once.
ensure_cluster_tools() {
	make -s -C "$ROOT" cluster-tools
}

# ----------------------------------------------------------- PostgreSQL

pg_bin() {
	# shellcheck disable=SC2012 # version-number folder names
	echo "/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n1)/bin"
}

# private_pg_dir: where the private PostgreSQL keeps its data: $DATA_DIR/pg
# when the postgres OS user can reach it, else (make dev locks .data to its
# owner, docs/operators.md) a folder of the postgres user's own, named after
# this checkout's $DATA_DIR so two checkouts never share one.
private_pg_dir() {
	if runuser -u postgres -- test -x "$DATA_DIR" 2>/dev/null; then
		echo "$DATA_DIR/pg"
		return
	fi
	local home
	home=$(getent passwd postgres | cut -d: -f6)
	echo "${home:-/var/lib/postgresql}/cartwright-$(printf '%s' "$DATA_DIR" | sha256sum | cut -c1-12)"
}

# private_pg_up: a PostgreSQL cluster of this Temporal cluster's own in
# private_pg_dir (initdb once), on $PG_PORT, as the postgres OS user.
private_pg_up() {
	local dir bin
	dir=$(private_pg_dir)
	bin=$(pg_bin)
	if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
		log "private PostgreSQL already running on :$PG_PORT"
		return 0
	fi
	if [ ! -s "$dir/data/PG_VERSION" ]; then
		log "creating a private PostgreSQL cluster in $dir"
		mkdir -p "$dir"
		chown postgres:postgres "$dir"
		chmod 700 "$dir"
		runuser -u postgres -- "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
	fi
	log "starting the private PostgreSQL on :$PG_PORT"
	without_locks runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o \
		"-p $PG_PORT -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
}

private_pg_down() {
	local dir
	dir=$(private_pg_dir)
	[ -s "$dir/data/postmaster.pid" ] || return 0
	log "stopping the private PostgreSQL"
	runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
}

# cluster_pg_stop / cluster_pg_start: the fault tests' PostgreSQL outage
# (private only: the shared one belongs to every stack on the machine).
cluster_pg_stop() {
	[ "$CLUSTER_PG" = private ] || die "pg-stop needs CLUSTER_PG=private (the shared PostgreSQL is everyone's)"
	private_pg_down
}

cluster_pg_start() {
	[ "$CLUSTER_PG" = private ] || die "pg-start needs CLUSTER_PG=private"
	private_pg_up
}

cluster_pg_up() {
	ensure_postgres_installed
	if [ "$CLUSTER_PG" = private ]; then
		private_pg_up
	else
		hold_postgres
		ensure_postgres_running
	fi
	ensure_pg_roles
	# Temporal's own login: owns its two databases, nothing else.
	as_postgres psql -q -X -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres \
		-v u="$TDB_USER" -v pw="$TDB_PASSWORD" <<-'SQL'
			SELECT format('CREATE ROLE %I LOGIN CREATEDB PASSWORD %L', :'u', :'pw')
			WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'u')
			\gexec
		SQL
}

sql_tool() {
	"$BIN/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p "$PG_PORT" \
		-u "$TDB_USER" --pw "$TDB_PASSWORD" "$@"
}

db_exists() {
	as_postgres psql -tA -X -p "$PG_PORT" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$1'" | grep -q 1
}

# temporal_schemas: the persistence and the visibility database, created
# and set up by temporal-sql-tool once, updated to the binary's schema
# version on every run (a no-op when current).
temporal_schemas() {
	local db schema
	for pair in "$TDB:$SQL_SCHEMA" "$TVDB:$SQL_VIS_SCHEMA"; do
		db=${pair%%:*} schema=${pair#*:}
		if ! db_exists "$db"; then
			log "creating Temporal database $db ($schema)"
			sql_tool --db "$db" create-database >>"$LOG_DIR/sql-tool.log" 2>&1 ||
				die "temporal-sql-tool create-database $db failed; see $LOG_DIR/sql-tool.log"
			sql_tool --db "$db" setup-schema -v 0.0 >>"$LOG_DIR/sql-tool.log" 2>&1 ||
				die "temporal-sql-tool setup-schema $db failed; see $LOG_DIR/sql-tool.log"
		fi
		sql_tool --db "$db" update-schema --schema-name "$schema" >>"$LOG_DIR/sql-tool.log" 2>&1 ||
			die "temporal-sql-tool update-schema $db failed; see $LOG_DIR/sql-tool.log"
	done
	log "Temporal databases $TDB and $TVDB at the schema of temporal-server $("$BIN/temporal-server" --version | awk '{print $3}')"
}

# ---------------------------------------------------------------- mTLS

# ca NAME CN: a certificate authority, made once.
ca() {
	[ -s "$TLS_DIR/$1.crt" ] && return 0
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 -sha256 \
		-subj "/O=cartwright cluster/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$TLS_DIR/$1.key" -out "$TLS_DIR/$1.crt" 2>/dev/null
	chmod 600 "$TLS_DIR/$1.key"
}

# cert NAME CA CN SAN server|client|both: a key and a certificate signed by
# CA, made once.
cert() {
	local name=$1 ca=$2 cn=$3 san=$4 usage=$5 eku
	[ -s "$TLS_DIR/$name.crt" ] && return 0
	case $usage in
	server) eku=serverAuth ;;
	client) eku=clientAuth ;;
	both) eku=serverAuth,clientAuth ;;
	esac
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/O=cartwright cluster/CN=$cn" \
		-keyout "$TLS_DIR/$name.key" -out "$TLS_DIR/$name.csr" 2>/dev/null
	openssl x509 -req -in "$TLS_DIR/$name.csr" -CA "$TLS_DIR/$ca.crt" -CAkey "$TLS_DIR/$ca.key" -CAcreateserial \
		-days 825 -sha256 -out "$TLS_DIR/$name.crt" -extfile <(printf '%s\n' \
			"basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=$eku" ${san:+"subjectAltName=$san"}) 2>/dev/null
	rm -f "$TLS_DIR/$name.csr"
	chmod 600 "$TLS_DIR/$name.key"
}

# ensure_certs: two CAs, as a production cluster keeps them apart:
#   - ca (clients'): signs the frontend's server certificate and the client
#     certificates of cartwright (worker, starter, CLI, gateway) and of the
#     Web UI; clients trust it for the frontend;
#   - internode-ca: signs the one certificate the services present to each
#     other (server and client), and the system worker to the frontend.
# The frontend accepts client certificates of either CA; history, matching
# and worker accept internode-ca's only, so a client certificate cannot
# talk to them directly.
ensure_certs() {
	mkdir -p "$TLS_DIR"
	chmod 700 "$TLS_DIR"
	[ -s "$TLS_DIR/internode.crt" ] || log "generating the cluster's CAs and certificates in ${TLS_DIR#"$ROOT"/}/"
	ca ca "cartwright cluster client CA"
	ca internode-ca "cartwright cluster internode CA"
	cert frontend ca temporal-frontend "DNS:temporal-frontend,DNS:localhost,IP:127.0.0.1" server
	cert internode internode-ca temporal-internode "DNS:temporal-internode,DNS:localhost,IP:127.0.0.1" both
	cert client ca cartwright-client "" client
	cert ui ca temporal-ui "" client
	# The codec server's HTTPS (the Web UI passes staff tokens only to an
	# https:// codec endpoint; docs/operators.md#sign-in-on-the-cluster).
	cert codec-server ca localhost "DNS:localhost,IP:127.0.0.1" server
	# The provider's public port (its issuer is https).
	cert idp ca localhost "DNS:localhost,IP:127.0.0.1" server
}

# ------------------------------------------------------- server config

# write_server_config SVC: the config folder of one service's process
# (they differ only in their Prometheus port).
write_server_config() {
	local svc=$1 dir="$CONF_DIR/$1" s
	mkdir -p "$dir"
	{
		cat <<-EOT
			# generated by scripts/cluster.sh; do not edit
			log:
			  stdout: true
			  level: warn
			persistence:
			  defaultStore: default
			  visibilityStore: visibility
			  numHistoryShards: ${CLUSTER_SHARDS:-4}
			  datastores:
			    default:
			      sql:
			        pluginName: postgres12
			        databaseName: $TDB
			        connectAddr: 127.0.0.1:$PG_PORT
			        connectProtocol: tcp
			        user: $TDB_USER
			        password: $TDB_PASSWORD
			        maxConns: $STORE_CONNS
			        maxIdleConns: $STORE_CONNS
			        maxConnLifetime: 1h
			    visibility:
			      sql:
			        pluginName: postgres12
			        databaseName: $TVDB
			        connectAddr: 127.0.0.1:$PG_PORT
			        connectProtocol: tcp
			        user: $TDB_USER
			        password: $TDB_PASSWORD
			        maxConns: $VIS_CONNS
			        maxIdleConns: $VIS_CONNS
			        maxConnLifetime: 1h
			global:
			  membership:
			    maxJoinDuration: 30s
			    broadcastAddress: 127.0.0.1
			  metrics:
			    prometheus:
			      framework: tally
			      timerType: histogram
			      listenAddress: 127.0.0.1:${PROM_PORT[$svc]}
			$(server_authorization)
			  tls:
			    internode:
			      server:
			        certFile: $TLS_DIR/internode.crt
			        keyFile: $TLS_DIR/internode.key
			        requireClientAuth: true
			        clientCaFiles: [$TLS_DIR/internode-ca.crt]
			      client:
			        serverName: temporal-internode
			        rootCaFiles: [$TLS_DIR/internode-ca.crt]
			    frontend:
			      server:
			        certFile: $TLS_DIR/frontend.crt
			        keyFile: $TLS_DIR/frontend.key
			        requireClientAuth: true
			        clientCaFiles: [$TLS_DIR/ca.crt, $TLS_DIR/internode-ca.crt]
			      client:
			        serverName: temporal-frontend
			        rootCaFiles: [$TLS_DIR/ca.crt]
			services:
		EOT
		for s in "${TEMPORAL_SERVICES[@]}"; do
			printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnIP: 127.0.0.1\n' \
				"$s" "${GRPC_PORT[$s]}" "${MEMBER_PORT[$s]}"
			[ "$s" != frontend ] || printf '      httpPort: %s\n' "$FRONTEND_HTTP_PORT"
		done
		cat <<-EOT
			clusterMetadata:
			  enableGlobalNamespace: false
			  failoverVersionIncrement: 10
			  masterClusterName: active
			  currentClusterName: active
			  clusterInformation:
			    active:
			      enabled: true
			      initialFailoverVersion: 1
			      rpcName: frontend
			      rpcAddress: 127.0.0.1:$FRONTEND_PORT
			      httpAddress: 127.0.0.1:$FRONTEND_HTTP_PORT
			dcRedirectionPolicy:
			  policy: noop
			archival:
			  history:
			    state: disabled
			  visibility:
			    state: disabled
			namespaceDefaults:
			  archival:
			    history:
			      state: disabled
			    visibility:
			      state: disabled
			publicClient:
			  hostPort: 127.0.0.1:$FRONTEND_PORT
			dynamicConfigClient:
			  filepath: $CONF_DIR/dynamicconfig.yaml
			  pollInterval: 10s
		EOT
	} >"$dir/cluster.yaml"
	chmod 600 "$dir/cluster.yaml" # holds the database password
}

# server_authorization: the authorization section of the services' global
# config: cartwright's authorizer (build/tools/temporalserver) with the
# provider's JWKS, unless CLUSTER_AUTH=0.
server_authorization() {
	idp_on || return 0
	printf '  authorization:\n    authorizer: cartwright\n    claimMapper: default\n'
	printf '    jwtKeyProvider:\n      keySourceURIs: [%s]\n      refreshInterval: 1m\n' "$IDP_JWKS"
}

# write_dynamic_config: the dev server's knobs (lib.sh TEMPORAL_DYNAMIC_CONFIG,
# docs/performance.md#dev-server-knobs) and the two it sets itself, so the
# cluster and the dev server are measured alike.
write_dynamic_config() {
	cat >"$CONF_DIR/dynamicconfig.yaml" <<-'EOT'
		# generated by scripts/cluster.sh; do not edit
		history.transferProcessorMaxPollRPS:
		  - value: 1000
		history.timerProcessorMaxPollRPS:
		  - value: 1000
		history.visibilityProcessorMaxPollRPS:
		  - value: 1000
		matching.numTaskqueueReadPartitions:
		  - value: 1
		matching.numTaskqueueWritePartitions:
		  - value: 1
		system.forceSearchAttributesCacheRefreshOnRead:
		  - value: true
		frontend.persistenceMaxQPS:
		  - value: 10000
		history.persistenceMaxQPS:
		  - value: 45000
		frontend.namespaceRPS.visibility:
		  - value: 100
	EOT
}

# ------------------------------------------------------------ processes

# tctl ARGS...: the temporal CLI on this cluster, with mTLS. With the
# authorizer on, the operator's bootstrap (namespace, search attributes)
# goes with the internode certificate, the cluster's own identity.
tctl() {
	local cert=client
	! idp_on || cert=internode
	"$BIN/temporal" --address "127.0.0.1:$FRONTEND_PORT" --tls-cert-path "$TLS_DIR/$cert.crt" \
		--tls-key-path "$TLS_DIR/$cert.key" --tls-ca-path "$TLS_DIR/ca.crt" --tls-server-name temporal-frontend \
		--command-timeout 5s "$@"
}

cluster_healthy() {
	tctl operator cluster health 2>/dev/null | grep -q SERVING
}

# service_up SVC: the process runs and its membership port answers (it
# opens once the service passed its start-up).
service_up() {
	pid_alive "$1" "$BIN/temporal-server" && port_open 127.0.0.1 "${MEMBER_PORT[$1]}"
}

start_temporal_service() {
	local svc=$1
	if pid_alive "$svc" "$BIN/temporal-server"; then
		log "temporal $svc already running (pid $(cat "$PID_DIR/$svc.pid"))"
		return 0
	fi
	write_server_config "$svc"
	if idp_on; then
		(idp_server_exports && start_bg "$svc" "$BIN/temporal-server" --root "$CONF_DIR" --config "$svc" --env cluster start --service "$svc")
	else
		start_bg "$svc" "$BIN/temporal-server" --root "$CONF_DIR" --config "$svc" --env cluster --allow-no-auth start --service "$svc"
	fi
}

# ensure_namespace: the default namespace (the server makes none itself),
# and our search attributes in it (SQL visibility keeps them per
# namespace).
ensure_namespace() {
	if ! tctl operator namespace describe --namespace default >/dev/null 2>&1; then
		tctl operator namespace create --namespace default --retention 72h >/dev/null 2>"$LOG_DIR/ns.err" ||
			grep -qi "already" "$LOG_DIR/ns.err" || die "creating namespace default failed: $(cat "$LOG_DIR/ns.err")"
		log "namespace default created"
	fi
	wait_until 60 "namespace default" tctl operator namespace describe --namespace default ||
		die "namespace default not visible on the frontend"
	local sa
	for sa in "${SEARCH_ATTRIBUTES[@]}"; do
		# The operator service reads namespaces from a cache that learns a
		# new one within seconds: retry "not found" until then.
		wait_until 60 "search attribute $sa" create_search_attribute "$sa" ||
			die "registering search attribute $sa failed: $(cat "$LOG_DIR/sa.err")"
	done
	rm -f "$LOG_DIR/sa.err" "$LOG_DIR/ns.err"
	log "search attributes registered: ${SEARCH_ATTRIBUTES[*]}"
}

create_search_attribute() {
	tctl operator search-attribute create --namespace default --name "${1%%:*}" --type "${1#*:}" \
		>/dev/null 2>"$LOG_DIR/sa.err" || grep -qi "already" "$LOG_DIR/sa.err"
}

# write_cluster_env: lib.sh's environment file, pointed at this cluster,
# plus the SDK's (and the CLI's) mTLS variables.
write_cluster_env() {
	write_env
	cat >>"$ENV_FILE" <<-EOT
		export TEMPORAL_TLS_CLIENT_CERT_PATH='$TLS_DIR/client.crt'
		export TEMPORAL_TLS_CLIENT_KEY_PATH='$TLS_DIR/client.key'
		export TEMPORAL_TLS_SERVER_CA_CERT_PATH='$TLS_DIR/ca.crt'
		export TEMPORAL_TLS_SERVER_NAME='temporal-frontend'
		export CARTWRIGHT_HEALTH_ADDR='$HEALTH_ADDR'
		export CARTWRIGHT_CLUSTER_DIR='$DATA_DIR'
		export CARTWRIGHT_CLUSTER_PG_ADMIN_DSN='$(cluster_admin_dsn)'
		export CARTWRIGHT_PG_MAX_CONNS='$APP_CONNS'
	EOT
	# A shell that sources it is the backend (starter, Go client); the
	# worker and the gateway get their own identity at their start.
	if idp_on; then
		idp_client_env cartwright-backend >>"$ENV_FILE"
		cat >>"$ENV_FILE" <<-EOT
			export CARTWRIGHT_OIDC_ISSUER='$IDP_ISSUER'
			export CARTWRIGHT_OIDC_GROUPS_CLAIM='$IDP_GROUPS_CLAIM'
			export CARTWRIGHT_CODEC_TLS_CERT='$TLS_DIR/codec-server.crt'
			export CARTWRIGHT_CODEC_TLS_KEY='$TLS_DIR/codec-server.key'
			export CARTWRIGHT_CODEC_URL='https://localhost:$CODEC_PORT/codec'
		EOT
	fi
	# The fault tests put a proxy of theirs before stripe-mock.
	if [ -n "${CLUSTER_STRIPE_API_BASE:-}" ]; then
		echo "export STRIPE_API_BASE='$CLUSTER_STRIPE_API_BASE'" >>"$ENV_FILE"
	fi
	# The worker's and the gateway's files again, with the lines above
	# (the superuser DSN stays out of both).
	write_process_envs
	# write_env locked the folder to 700; the private PostgreSQL (the
	# postgres OS user) must still reach $DATA_DIR/pg. Secrets stay 600.
	chmod 711 "$DATA_DIR"
}

# cluster_admin_dsn: a superuser's connection to the cluster's application
# database (the fault tests count rows and audit through it).
cluster_admin_dsn() {
	if [ "$CLUSTER_PG" = private ]; then
		echo "postgres://postgres@127.0.0.1:$PG_PORT/$APP_DB?sslmode=disable"
	else
		echo "postgres://cartwright_admin:cartwright_admin@127.0.0.1:$PG_PORT/$APP_DB?sslmode=disable"
	fi
}

# cluster_pg_budget: the connections the cluster's processes may open:
# four Temporal services' store and visibility pools, the provider's (when
# it runs), the worker's and the MCP gateway's pools.
cluster_pg_budget() {
	local idp=0
	! idp_on || idp=$IDP_CONNS
	echo $((4 * (STORE_CONNS + VIS_CONNS) + idp + 2 * APP_CONNS))
}

# check_pg_budget: refuse to start a cluster whose pools could take more
# connections than its PostgreSQL allows (a shared one serves other
# stacks too: the budget is the cluster's share, CLUSTER_PG_CONNS).
check_pg_budget() {
	local max reserved budget
	budget=$(cluster_pg_budget)
	[ "$budget" -le "$CLUSTER_PG_CONNS" ] || die "the cluster's pools add up to $budget, above CLUSTER_PG_CONNS=$CLUSTER_PG_CONNS"
	max=$(as_postgres psql -tA -X -p "$PG_PORT" -d postgres -c 'SHOW max_connections' 2>/dev/null) || return 0
	# The superusers' reserve is no one else's (the migrations, psql).
	reserved=$(as_postgres psql -tA -X -p "$PG_PORT" -d postgres -c 'SHOW superuser_reserved_connections' 2>/dev/null) || reserved=0
	if [ "$budget" -ge "$((max - reserved))" ]; then
		die "the cluster's pools may open $budget PostgreSQL connections, not fewer than max_connections $max less the $reserved reserved for superusers; lower CLUSTER_PG_CONNS"
	fi
	log "PostgreSQL connections: the cluster may open $budget of max_connections $max (CLUSTER_PG_CONNS=$CLUSTER_PG_CONNS: Temporal $((4 * (STORE_CONNS + VIS_CONNS))), provider $((budget - 4 * (STORE_CONNS + VIS_CONNS) - 2 * APP_CONNS)), worker and gateway $APP_CONNS each)"
}

# worker_sum: what the running worker was started from, its binary and
# its environment file: a change of either restarts it.
worker_sum() { cat "$CBIN/cartwright-worker" "$ENV_FILE" 2>/dev/null | sha256sum | cut -d' ' -f1; }

readyz() { curl -fsS -o /dev/null --max-time 2 "http://$HEALTH_ADDR/readyz"; }

# start_cartwright_worker: our worker, every role (codec server included),
# built from this checkout; restarted when its binary changed.
start_cartwright_worker() {
	local sum
	# CLUSTER_NO_BUILD=1 (the fault matrix's restarts): the binary built by
	# the first `up` stays; nothing to rebuild between two kills.
	[ "${CLUSTER_NO_BUILD:-0}" = 1 ] && [ -x "$CBIN/cartwright-worker" ] || go_build "$CBIN/cartwright-worker" ./worker
	sum=$(worker_sum)
	if pid_alive cartwright-worker "$CBIN/cartwright-worker"; then
		if [ "$sum" = "$(cat "$PID_DIR/cartwright-worker.sha256" 2>/dev/null)" ]; then
			log "cartwright worker already running (pid $(cat "$PID_DIR/cartwright-worker.pid"))"
			return 0
		fi
		log "worker code or environment ($ENV_FILE) changed; restarting the cartwright worker"
		stop_pid cartwright-worker "$CBIN/cartwright-worker"
	fi
	# Its own file (docs/operators.md#keys-and-grants-per-process).
	# shellcheck disable=SC1091 # generated file
	(. "$DATA_DIR/worker.env" && eval "$(idp_client_env cartwright-worker)" && start_bg cartwright-worker "$CBIN/cartwright-worker")
	echo "$sum" >"$PID_DIR/cartwright-worker.sha256"
	if ! wait_until 90 "cartwright worker (readyz on $HEALTH_ADDR)" readyz; then
		tail -n 30 "$LOG_DIR/cartwright-worker.log" >&2
		die "the cartwright worker did not become ready; log above"
	fi
}

# start_cluster_mcp: the MCP gateway, and the dev agent's token once.
start_cluster_mcp() {
	local sum out
	[ "${CLUSTER_NO_BUILD:-0}" = 1 ] && [ -x "$BIN/starter" ] || go_build "$BIN/starter" ./starter
	if [ ! -s "$DATA_DIR/mcp-dev.token" ]; then
		# shellcheck disable=SC1090 # generated file
		out=$(. "$ENV_FILE" && "$BIN/starter" mcp token create --actor dev-agent) || die "could not create the dev agent's MCP token"
		(umask 077 && printf '%s\n' "${out%%$'\n'*}" >"$DATA_DIR/mcp-dev.token")
		write_cluster_env
	fi
	# Like the worker's: its code and its own environment file.
	sum=$(cat "$BIN/starter" "$DATA_DIR/gateway.env" | sha256sum | cut -d' ' -f1)
	if pid_alive mcp "$CBIN/mcp-gateway"; then
		if [ "$sum" = "$(cat "$PID_DIR/mcp.sha256" 2>/dev/null)" ]; then
			log "MCP gateway already running (pid $(cat "$PID_DIR/mcp.pid"))"
			return 0
		fi
		log "gateway code or environment ($DATA_DIR/gateway.env) changed; restarting the MCP gateway"
		stop_pid mcp "$CBIN/mcp-gateway"
	fi
	cp "$BIN/starter" "$CBIN/mcp-gateway"
	# Its own file: no seal ring, codec secret or issuing DSN.
	# shellcheck disable=SC1091 # generated file
	(. "$DATA_DIR/gateway.env" && eval "$(idp_client_env cartwright-mcp-gateway)" && start_bg mcp "$CBIN/mcp-gateway" mcp serve --timeout 60s)
	echo "$sum" >"$PID_DIR/mcp.sha256"
	wait_until 90 "MCP gateway (http://$MCP_ADDR/mcp)" port_open "${MCP_ADDR%:*}" "${MCP_ADDR##*:}" ||
		{ tail -n 30 "$LOG_DIR/mcp.log" >&2; die "the MCP gateway did not come up; log above"; }
}

# start_ui: Temporal's Web UI server (github.com/temporalio/ui-server, built
# into .bin/temporal-ui-server) on mTLS to the frontend, its codec endpoint
# our worker's codec server (localhost on both sides: same-site, so the
# codec server's sign-in cookie travels with the UI's requests).
start_ui() {
	[ "${CLUSTER_UI:-1}" = 1 ] || return 0
	if pid_alive ui "$BIN/temporal-ui-server"; then
		log "Web UI already running (pid $(cat "$PID_DIR/ui.pid"))"
		return 0
	fi
	mkdir -p "$CONF_DIR/ui"
	cat >"$CONF_DIR/ui/cluster.yaml" <<-EOT
		# generated by scripts/cluster.sh; do not edit
		temporalGrpcAddress: 127.0.0.1:$FRONTEND_PORT
		host: 127.0.0.1
		port: $UI_PORT
		enableUi: true
		defaultNamespace: default
		hideLogs: true
		cors:
		  cookieInsecure: true
		tls:
		  caFile: $TLS_DIR/ca.crt
		  certFile: $TLS_DIR/ui.crt
		  keyFile: $TLS_DIR/ui.key
		  serverName: temporal-frontend
		  enableHostVerification: true
		codec:
		  endpoint: $(codec_scheme)://localhost:$CODEC_PORT/codec
		  includeCredentials: true
		$(ui_codec_token)
		$(ui_auth)
	EOT
	chmod 600 "$CONF_DIR/ui/cluster.yaml" # holds the UI's client secret
	# The UI server reads the provider's discovery over https (the
	# cluster's client CA beside the system's).
	(! idp_on || export SSL_CERT_FILE="$TLS_DIR/ca.crt"
		start_bg ui "$BIN/temporal-ui-server" --root "$CONF_DIR" --config ui --env cluster start)
	wait_until 60 "Web UI (http://localhost:$UI_PORT)" curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$UI_PORT/" ||
		{ tail -n 20 "$LOG_DIR/ui.log" >&2; die "the Web UI did not come up; log above"; }
}

# codec_scheme: https with the provider (the codec server then serves
# TLS), http without.
codec_scheme() {
	if idp_on; then echo https; else echo http; fi
}

# ui_codec_token: with the provider, the Web UI passes the staff member's
# access token to the codec server, which verifies it (no second sign-in).
ui_codec_token() {
	! idp_on || echo '  passAccessToken: true'
}

# ui_auth: staff sign in to the Web UI through the provider (the UI
# forwards the access token to the frontend), unless CLUSTER_AUTH=0.
ui_auth() {
	idp_on || return 0
	cat <<-EOT
		auth:
		  enabled: true
		  providers:
		    - label: organisation sign-in
		      type: oidc
		      providerUrl: $IDP_ISSUER
		      issuerUrl: $IDP_ISSUER
		      clientId: cartwright-web-ui
		      clientSecret: $(cat "$IDP_DIR/cartwright-web-ui.secret")
		      scopes: [openid, profile, email]
		      callbackUrl: http://localhost:$UI_PORT/auth/sso/callback
	EOT
}

# ------------------------------------------------------------- commands

# ensure_debian_tools: openssl (the certificates) and curl (the readiness
# checks) from Debian's packages when absent.
ensure_debian_tools() {
	local missing=() t
	for t in openssl curl; do command -v "$t" >/dev/null || missing+=("$t"); done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]} from Debian's packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

cluster_up() {
	ensure_debian_tools
	ensure_tools
	ensure_cluster_tools
	cluster_pg_up
	check_pg_budget
	temporal_schemas
	ensure_certs
	idp_up
	write_dynamic_config
	local svc
	# One at a time, each until its membership port answers: on a fresh
	# database the first process writes the cluster metadata, and four
	# starting at once race for it (the losers exit: "Failed to apply
	# cluster metadata").
	for svc in "${TEMPORAL_SERVICES[@]}"; do
		start_temporal_service "$svc"
		wait_until 90 "temporal $svc (membership :${MEMBER_PORT[$svc]})" service_up "$svc" || {
			tail -n 20 "$LOG_DIR/$svc.log" >&2
			die "temporal $svc did not come up; log above"
		}
	done
	if ! wait_until 120 "Temporal frontend (127.0.0.1:$FRONTEND_PORT, mTLS)" cluster_healthy; then
		for svc in "${TEMPORAL_SERVICES[@]}"; do tail -n 5 "$LOG_DIR/$svc.log" >&2; done
		die "the cluster did not become healthy; logs in $LOG_DIR"
	fi
	for svc in "${TEMPORAL_SERVICES[@]}"; do
		pid_alive "$svc" "$BIN/temporal-server" || { tail -n 20 "$LOG_DIR/$svc.log" >&2; die "temporal $svc exited; log above"; }
	done
	ensure_namespace
	if [ "${CLUSTER_APPS:-1}" = 0 ]; then
		# Temporal alone (the bench's cluster): no stripe-mock, no
		# cartwright processes, nothing idle beside what is measured.
		write_cluster_env
		log "Temporal cluster up (CLUSTER_APPS=0: no cartwright processes)"
		return 0
	fi
	start_stripe_mock "$STRIPE_PORT"
	write_cluster_env
	if [ "${CLUSTER_NO_BUILD:-0}" = 1 ] && [ -x "$BIN/starter" ]; then
		# shellcheck disable=SC1090 # generated file
		(. "$ENV_FILE" && CARTWRIGHT_PG_OWNER_DSN=$(owner_dsn) "$BIN/starter" migrate >/dev/null) || die "starter migrate failed"
	else
		migrate_app_db
	fi
	start_cartwright_worker
	start_cluster_mcp
	start_ui
	cat <<-EOF

		  cartwright on a Temporal cluster is up (state in ${DATA_DIR#"$ROOT"/}).
		    frontend (mTLS)   127.0.0.1:$FRONTEND_PORT   history :${GRPC_PORT[history]}, matching :${GRPC_PORT[matching]}, worker :${GRPC_PORT[worker]}
		    PostgreSQL        :$PG_PORT ($CLUSTER_PG): $TDB, $TVDB, $APP_DB
		    Web UI            http://localhost:$UI_PORT   (codec: http://localhost:$CODEC_PORT/codec/login)
		    MCP gateway       http://$MCP_ADDR/mcp
		    logs, pids        ${LOG_DIR#"$ROOT"/}/, ${PID_DIR#"$ROOT"/}/
		    environment       . ${ENV_FILE#"$ROOT"/}   (then .bin/starter ..., .bin/temporal ...)
		  Stop it all with: make cluster-down

	EOF
}

cluster_down() {
	local svc
	stop_pid ui "$BIN/temporal-ui-server"
	stop_pid mcp "$CBIN/mcp-gateway"
	stop_pid cartwright-worker "$CBIN/cartwright-worker"
	stop_pid stripe-mock "$BIN/stripe-mock"
	# The frontend first (no new work), history last (it owns the shards).
	for svc in frontend worker matching history; do
		stop_pid "$svc" "$BIN/temporal-server"
	done
	idp_down
	if [ "$CLUSTER_PG" = private ]; then
		private_pg_down
	else
		stop_postgres_if_ours
	fi
}

cluster_status() {
	local n b
	for n in history matching frontend worker; do
		if pid_alive "$n" "$BIN/temporal-server"; then echo "temporal $n: running (pid $(cat "$PID_DIR/$n.pid"))"
		else echo "temporal $n: down"; fi
	done
	for n in cartwright-worker:$CBIN/cartwright-worker mcp:$CBIN/mcp-gateway stripe-mock:$BIN/stripe-mock ui:$BIN/temporal-ui-server; do
		b=${n#*:} n=${n%%:*}
		if pid_alive "$n" "$b"; then echo "$n: running (pid $(cat "$PID_DIR/$n.pid"))"; else echo "$n: down"; fi
	done
	idp_status
	if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then echo "postgres ($CLUSTER_PG): up on :$PG_PORT"; else echo "postgres ($CLUSTER_PG): down"; fi
}

# cluster_stop SVC: a graceful stop (SIGTERM) of one service, for a
# rolling restart (`up` starts it again).
cluster_stop() {
	case $1 in
	frontend | history | matching | worker) stop_pid "$1" "$BIN/temporal-server" ;;
	cartwright-worker) stop_pid "$1" "$CBIN/cartwright-worker" ;;
	hydra) stop_pid "$1" "$BIN/hydra" ;;
	*) die "stop: unknown service '$1'" ;;
	esac
}

# cluster_frontend_auth on|off: the frontend restarted with the authorizer
# (on: cartwright's, on the provider's tokens) or without it (off:
# --allow-no-auth, mTLS only), the rest of the cluster and the provider
# left running. Only the frontend authorizes calls, so this switches
# authorization for the whole cluster: the bench measures its cost
# (docs/performance.md#authorization-on-the-cluster).
cluster_frontend_auth() {
	case $1 in
	on) CLUSTER_AUTH=1 ;;
	off) CLUSTER_AUTH=0 ;;
	*) die "frontend-auth: want on or off" ;;
	esac
	pid_alive hydra "$BIN/hydra" || [ "$1" = off ] || die "frontend-auth on: the provider is not running (start the cluster with CLUSTER_AUTH=1)"
	stop_pid frontend "$BIN/temporal-server"
	start_temporal_service frontend
	wait_until 90 "temporal frontend (membership :${MEMBER_PORT[frontend]})" service_up frontend ||
		{ tail -n 20 "$LOG_DIR/frontend.log" >&2; die "temporal frontend did not come up; log above"; }
	wait_until 120 "Temporal frontend (authorization $1)" cluster_healthy || die "the frontend did not become healthy"
}

# cluster_kill SVC: SIGKILL, by its pid file, a process this cluster
# started (and only if it still is that binary).
cluster_kill() {
	local svc=$1 bin pid
	case $svc in
	frontend | history | matching | worker) bin="$BIN/temporal-server" ;;
	cartwright-worker) bin="$CBIN/cartwright-worker" ;;
	mcp) bin="$CBIN/mcp-gateway" ;;
	*) die "kill: unknown service '$svc'" ;;
	esac
	pid_alive "$svc" "$bin" || die "kill: $svc is not running"
	pid=$(cat "$PID_DIR/$svc.pid")
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	log "SIGKILLed $svc (pid $pid)"
}
