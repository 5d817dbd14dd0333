# shellcheck shell=bash
# Shared helpers for the local stack scripts. Sourced, never executed.
#
# Conventions:
#   - every process we start gets a pid file in $PID_DIR/<name>.pid and a log
#     in $LOG_DIR/<name>.log; "stop" only ever signals pids from those files,
#     and only if /proc/<pid>/cmdline still names the binary we started
#     (a stale pid file must never make us kill an unrelated process);
#   - "running" means: pid file alive, or (for things we did not start) the
#     port answers. A port that answers without a pid file is reused, not
#     restarted, and never stopped by us.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$ROOT/.bin"

# Colour only on a terminal, so CI logs stay plain text.
if [ -t 2 ]; then C_B=$'\033[1;34m' C_Y=$'\033[1;33m' C_R=$'\033[1;31m' C_0=$'\033[0m'
else C_B='' C_Y='' C_R='' C_0=''; fi
# LOG_TIMES=1 (make cluster) puts the UTC time before every line.
stamp() { [ "${LOG_TIMES:-0}" = 1 ] && date -u '+%H:%M:%S ' || true; }
log()  { printf '%s==>%s %s%s\n' "$C_B" "$C_0" "$(stamp)" "$*" >&2; }
warn() { printf '%swarn:%s %s%s\n' "$C_Y" "$C_0" "$(stamp)" "$*" >&2; }
die()  { printf '%serror:%s %s\n' "$C_R" "$C_0" "$*" >&2; exit 1; }

# as_root CMD...: we run as root in CI; elsewhere fall back to sudo.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# without_locks CMD...: CMD with the stacks' lock descriptors (6-9:
# PG_USERS_LOCK's hold and check, start.lock, stack.lock) closed. A daemon
# CMD starts (PostgreSQL) outlives this shell and must not inherit them:
# a postgres holding fd 7 keeps the shared PostgreSQL lock forever, so
# `make down` would always think another stack still uses the cluster.
without_locks() { "$@" 6>&- 7>&- 8>&- 9>&-; }

# npm_setup DIR PACKAGE WHAT [APT_PACKAGE...]: the setup of a Node test
# (WHAT names it in messages): node, npm and the APT_PACKAGEs from Debian's
# packages if absent, then DIR's pinned npm packages (its package-lock.json)
# with npm ci unless PACKAGE is installed and the lock is not newer. Without
# network for apt or npm it fails, saying so: the tests fail, never skip,
# when it has not run. Puppeteer's own browser is never downloaded
# (scripts/ui uses Debian's chromium).
npm_setup() {
	local dir=$1 pkg=$2 what=$3 need=() p
	shift 3
	for p in "$@"; do command -v "$p" >/dev/null || need+=("$p"); done
	command -v node >/dev/null || need+=(nodejs)
	command -v npm >/dev/null || need+=(npm)
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]} from Debian's packages ($what needs them)"
		as_root apt-get update -qq ||
			die "apt-get update failed (no network or no Debian mirror?): cannot install ${need[*]} for $what"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
			die "apt-get install ${need[*]} failed: $what cannot run"
	fi
	if [ ! -d "$dir/node_modules/$pkg" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
		log "installing $dir's npm packages (npm ci)"
		(cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) ||
			die "npm ci in $dir failed (no network or no npm registry?): $what cannot run"
	fi
}

# as_postgres CMD...: the Debian cluster trusts the OS user "postgres" over
# the Unix socket (peer auth), which is the only superuser access a fresh
# install has; use it to create our roles.
as_postgres() {
	if [ "$(id -un)" = postgres ]; then "$@"
	elif [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"
	else sudo -u postgres "$@"; fi
}

# port_open HOST PORT: true if something accepts TCP connections there.
# Uses bash's /dev/tcp so we need neither nc nor ss.
port_open() {
	(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# wait_until SECONDS DESCRIPTION CMD...: poll CMD every 0.5 s.
wait_until() {
	local secs=$1 what=$2; shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			return 1
		fi
		sleep 0.5
	done
	log "$what is ready"
}

# pid_alive NAME BINARY: pid file exists, process exists, and it is still the
# binary we started (guards against pid reuse after a reboot or crash).
pid_alive() {
	local f="$PID_DIR/$1.pid" pid
	[ -f "$f" ] || return 1
	pid=$(cat "$f")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# start_bg NAME CMD...: start CMD detached (own session, so Ctrl-C on make
# does not kill the stack), stdout+stderr to the log, pid to the pid file.
start_bg() {
	local name=$1; shift
	mkdir -p "$PID_DIR" "$LOG_DIR"
	# setsid without -f execs in place (a background job of a non-interactive
	# shell is not a group leader), so $! is the service's own pid.
	setsid "$@" >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
	echo $! >"$PID_DIR/$name.pid"
	log "started $name (pid $!, log $LOG_DIR/$name.log)"
}

# stop_pid NAME BINARY: SIGTERM the recorded pid, wait for a graceful exit
# (the Temporal dev server needs a few seconds to flush its SQLite file),
# SIGKILL after 30 s. Silently does nothing if we did not start NAME.
stop_pid() {
	local name=$1 bin=$2 f="$PID_DIR/$1.pid" pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if pid_alive "$name" "$bin"; then
		log "stopping $name (pid $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			warn "$name did not exit after 30 s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$f"
}

# ---------------------------------------------------------------- tools

# ensure_tools: build the pinned tool binaries from build/tools/go.mod into .bin/
# (once; rebuilt when build/tools/go.mod or go.sum changes). Building them once and
# exec'ing the binaries avoids `go tool` re-linking the 250 MB temporal CLI on
# every call.
ensure_tools() {
	make -s -C "$ROOT" tools
}

# go_build OUT PKG...: go build with the build hash linked in. Evidence
# snapshots record toolkit.BuildHash() as the code version; Go's own VCS
# stamping cannot be relied on (GOFLAGS may hold -buildvcs=false), so pass the
# commit explicitly, "-dirty" when tracked files differ from it.
go_build() {
	local out=$1 rev; shift
	rev=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
	git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"
	(cd "$ROOT" && go build -ldflags "-X github.com/cartwright-dev/cartwright/toolkit.build=$rev" -o "$out" "$@")
}

# -------------------------------------------------------------- postgres

PG_PORT=${CARTWRIGHT_PG_PORT:-5432}

# pg_cluster: "<version> <name>" of the Debian cluster on $PG_PORT, empty
# if none.
pg_cluster() {
	pg_lsclusters -h 2>/dev/null | awk -v p="$PG_PORT" '$3 == p { print $1, $2; exit }'
}

# ensure_postgres_installed: Debian's postgresql package if absent.
ensure_postgres_installed() {
	if command -v pg_ctlcluster >/dev/null && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		return 0
	fi
	log "PostgreSQL not found; installing Debian's postgresql package"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

# ensure_postgres_running: start the Debian cluster if nothing answers on
# $PG_PORT; if we started it, record that in $PID_DIR/postgres.cluster so
# `down` stops it again (and only then: a system PostgreSQL that was already
# running is left alone).
ensure_postgres_running() {
	if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
		log "PostgreSQL already running on :$PG_PORT"
		return 0
	fi
	local cl
	cl=$(pg_cluster)
	if [ -z "$cl" ]; then
		# Package present but no cluster on our port (a container image
		# that skipped it, or CARTWRIGHT_PG_PORT set to a new port): create
		# one, "main" unless that name is taken.
		local ver name=main
		# shellcheck disable=SC2012 # version-number folder names
		ver=$(ls /usr/lib/postgresql | sort -V | tail -n1)
		[ ! -d "/etc/postgresql/$ver/main" ] || name="cartwright$PG_PORT"
		log "creating PostgreSQL cluster $ver/$name on :$PG_PORT"
		as_root pg_createcluster -p "$PG_PORT" "$ver" "$name" >/dev/null
		cl="$ver $name"
	fi
	log "starting PostgreSQL cluster $cl"
	# shellcheck disable=SC2086 # "$ver $name" must split into two args
	without_locks as_root pg_ctlcluster $cl start
	mkdir -p "$PID_DIR"
	echo "$cl" >"$PID_DIR/postgres.cluster"
	wait_until 30 "PostgreSQL" pg_isready -q -h 127.0.0.1 -p "$PG_PORT" ||
		die "PostgreSQL did not become ready; see /var/log/postgresql/"
}

# PostgreSQL on $PG_PORT is shared by every stack on the machine (dev, test,
# another checkout's, the ones scripts/test.sh starts), so whichever started
# it must not stop it under another. Each stack declares that it uses it
# with a shared lock on one machine-wide file, taken by the shell that
# brings the stack up (fd 7, hold_postgres) and inherited by every service
# it starts (start_bg), so the lock lives as long as any of them or the
# shell (a running `make test`) does. stop_postgres_if_ours stops the
# cluster only when it can take that lock exclusively: no other stack left.
PG_USERS_LOCK="${TMPDIR:-/tmp}/cartwright-postgres-$PG_PORT.users.lock"

hold_postgres() {
	exec 7>>"$PG_USERS_LOCK"
	flock -s 7
}

stop_postgres_if_ours() {
	local f="$PID_DIR/postgres.cluster"
	[ -f "$f" ] || return 0
	# Our own hold (this shell's, if it brought the stack up) must not
	# count: our services are stopped by now.
	exec 7>&- 6>>"$PG_USERS_LOCK"
	if ! flock -x -n 6; then
		exec 6>&-
		warn "PostgreSQL cluster $(cat "$f") (started by this $PROFILE stack) is still used by another stack; leaving it running"
		return 0
	fi
	# Held while it stops: a stack coming up meanwhile waits, then starts
	# it again (ensure_postgres_running).
	log "stopping PostgreSQL cluster $(cat "$f") (started by us, no other stack uses it)"
	# shellcheck disable=SC2046
	as_root pg_ctlcluster $(cat "$f") stop || true
	rm -f "$f"
	exec 6>&-
}

# ensure_pg_roles: idempotently create the roles of
# docs/evidence.md#database-roles (cluster-wide, shared by every database):
#   - cartwright_owner/cartwright_owner, owner of the profile's application
#     database $APP_DB ("cartwright" for dev, "cartwright_test" for test, so
#     nothing a test runs with the test stack's environment writes into make
#     dev's) and of its schema; only `starter migrate` connects as it
#     (migrate_app_db);
#   - cartwright_runtime (no login), the group every runtime grant goes to;
#   - cartwright/cartwright, in cartwright_runtime: the worker's, the
#     gateway's and the starter's connection (CARTWRIGHT_PG_DSN); owns nothing;
#   - cartwright_issuing (no login), the group the identity grants go to
#     (staff, staff tokens, MCP tokens), and cartwright_issuer/cartwright_issuer
#     in it: the operators' `starter staff …` and `starter mcp token …`
#     (CARTWRIGHT_PG_ISSUER_DSN, never in a worker's or the gateway's env);
#   - cartwright_admin/cartwright_admin, SUPERUSER, for integration tests
#     that create and drop a database per test over TCP (root cannot use the
#     postgres user's peer auth from inside go test).
ensure_pg_roles() {
	as_postgres psql -q -X -v ON_ERROR_STOP=1 -v db="$APP_DB" -p "$PG_PORT" -d postgres <<-'SQL'
		DO $$
		BEGIN
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright_runtime') THEN
		    CREATE ROLE cartwright_runtime NOLOGIN;
		  END IF;
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright_owner') THEN
		    CREATE ROLE cartwright_owner LOGIN PASSWORD 'cartwright_owner';
		  END IF;
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright') THEN
		    CREATE ROLE cartwright LOGIN PASSWORD 'cartwright';
		  END IF;
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright_issuing') THEN
		    CREATE ROLE cartwright_issuing NOLOGIN;
		  END IF;
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright_issuer') THEN
		    CREATE ROLE cartwright_issuer LOGIN PASSWORD 'cartwright_issuer';
		  END IF;
		  IF NOT pg_has_role('cartwright_issuer', 'cartwright_issuing', 'MEMBER') THEN
		    GRANT cartwright_issuing TO cartwright_issuer;
		  END IF;
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cartwright_admin') THEN
		    CREATE ROLE cartwright_admin LOGIN SUPERUSER PASSWORD 'cartwright_admin';
		  END IF;
		  IF NOT pg_has_role('cartwright', 'cartwright_runtime', 'MEMBER') THEN
		    GRANT cartwright_runtime TO cartwright;
		  END IF;
		END
		$$;
		SELECT format('CREATE DATABASE %I OWNER cartwright_owner', :'db')
		WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')
		\gexec
	SQL
}

# owner_dsn: the schema owner's connection, given to `starter migrate` only
# (never written into .data/env, which the worker reads).
owner_dsn() {
	echo "postgres://cartwright_owner:cartwright_owner@127.0.0.1:$PG_PORT/$APP_DB?sslmode=disable"
}

# issuer_dsn: the issuing role's connection (docs/operators.md#keys-and-grants-per-process),
# written into the operator's .data/env only.
issuer_dsn() {
	echo "postgres://cartwright_issuer:cartwright_issuer@127.0.0.1:$PG_PORT/$APP_DB?sslmode=disable"
}

# adopt_legacy_app_db: a database "cartwright" made before the roles were
# split is owned, with all its tables, by the runtime login "cartwright";
# hand it to cartwright_owner (docs/evidence.md#creating-the-roles-and-upgrading-a-database). Only
# `make dev` calls this: the shared cluster's database may be in use by
# another checkout's stack, which must not lose its tables under it.
adopt_legacy_app_db() {
	as_postgres psql -q -X -v ON_ERROR_STOP=1 -p "$PG_PORT" -d cartwright <<-'SQL'
		SELECT 'REASSIGN OWNED BY cartwright TO cartwright_owner'
		WHERE EXISTS (SELECT FROM pg_database WHERE datname = 'cartwright' AND datdba = 'cartwright'::regrole)
		   OR EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		              WHERE n.nspname = 'public' AND c.relowner = 'cartwright'::regrole)
		\gexec
	SQL
}

# migrate_app_db: `starter migrate` as the owner, before the worker and the
# gateway start (they never migrate).
migrate_app_db() {
	log "migrating database $APP_DB (as cartwright_owner)"
	go_build "$BIN/starter" ./starter
	# shellcheck disable=SC1090 # generated file
	(. "$ENV_FILE" && CARTWRIGHT_PG_OWNER_DSN=$(owner_dsn) "$BIN/starter" migrate >/dev/null) ||
		die "starter migrate failed"
}

# -------------------------------------------------------------- temporal

# Dev-server knobs (docs/performance.md#dev-server-knobs): the default
# transfer-queue poll limit of 20/s adds ~45 ms to every task hand-off at low
# load, and the default 4 task-queue partitions served by few pollers cause ~2 s
# stalls. The CLI also re-reads the search-attribute cache on every request;
# with its SQLite visibility that cache holds only fixed slots (a search
# attribute is registered in the namespace), so the re-read buys nothing.
TEMPORAL_DYNAMIC_CONFIG=(
	--dynamic-config-value history.transferProcessorMaxPollRPS=1000
	--dynamic-config-value history.timerProcessorMaxPollRPS=1000
	--dynamic-config-value history.visibilityProcessorMaxPollRPS=1000
	--dynamic-config-value matching.numTaskqueueReadPartitions=1
	--dynamic-config-value matching.numTaskqueueWritePartitions=1
	--dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false
)

# Custom search attributes the workflows upsert (name:type).
SEARCH_ATTRIBUTES=(CartwrightFlow:Keyword CartwrightState:Keyword AwaitingApproval:Bool)

temporal_healthy() {
	"$BIN/temporal" operator cluster health --address "$1" --command-timeout 2s 2>/dev/null | grep -q SERVING
}

# start_temporal ADDR_PORT UI_PORT DB_FILE(empty = in-memory)
start_temporal() {
	local port=$1 ui=$2 db=$3 args
	if pid_alive temporal "$BIN/temporal"; then
		log "Temporal dev server already running (pid $(cat "$PID_DIR/temporal.pid"))"
	elif port_open 127.0.0.1 "$port"; then
		warn "something we did not start listens on :$port; using it as the Temporal server"
	else
		args=(server start-dev --ip 127.0.0.1 --port "$port" --log-level warn "${TEMPORAL_DYNAMIC_CONFIG[@]}")
		# The UI calls the worker's codec server to show staff decoded
		# payloads; localhost on both sides keeps them same-site, so the
		# codec server's sign-in cookie travels with the UI's requests.
		if [ -n "$ui" ]; then
			args+=(--ui-port "$ui" --ui-codec-endpoint "http://localhost:$CODEC_PORT/codec")
		else args+=(--headless); fi
		if [ -n "$db" ]; then args+=(--db-filename "$db"); fi
		start_bg temporal "$BIN/temporal" "${args[@]}"
	fi
	wait_until 90 "Temporal (127.0.0.1:$port)" temporal_healthy "127.0.0.1:$port" ||
		die "Temporal did not become healthy; see $LOG_DIR/temporal.log"
}

# register_search_attributes ADDR: `create` is idempotent for an existing
# attribute of the same type, so this is safe on every run.
register_search_attributes() {
	local sa
	for sa in "${SEARCH_ATTRIBUTES[@]}"; do
		"$BIN/temporal" operator search-attribute create --address "$1" \
			--name "${sa%%:*}" --type "${sa#*:}" >/dev/null 2>"$LOG_DIR/sa.err" ||
			grep -qi "already exists" "$LOG_DIR/sa.err" ||
			die "registering search attribute $sa failed: $(cat "$LOG_DIR/sa.err")"
	done
	rm -f "$LOG_DIR/sa.err"
	log "search attributes registered: ${SEARCH_ATTRIBUTES[*]}"
}

# ----------------------------------------------------------- stripe-mock

# stripe-mock opens its port only after loading its OpenAPI spec, so an open
# port means ready (and we need no curl).
stripe_mock_ready() {
	port_open 127.0.0.1 "$1"
}

# start_stripe_mock PORT (plain HTTP; stripe-go talks to it via STRIPE_API_BASE)
start_stripe_mock() {
	local port=$1
	if pid_alive stripe-mock "$BIN/stripe-mock"; then
		log "stripe-mock already running (pid $(cat "$PID_DIR/stripe-mock.pid"))"
	elif port_open 127.0.0.1 "$port"; then
		warn "something we did not start listens on :$port; using it as stripe-mock"
	else
		# Given only an HTTP address, stripe-mock also binds HTTPS on
		# :12112 (the test stack's port); park HTTPS on a random port.
		start_bg stripe-mock "$BIN/stripe-mock" -http-addr "127.0.0.1:$port" -https-addr 127.0.0.1:0
	fi
	wait_until 30 "stripe-mock (:$port)" stripe_mock_ready "$port" ||
		die "stripe-mock did not answer; see $LOG_DIR/stripe-mock.log"
}

# -------------------------------------------------------------- profiles

# load_profile dev|test: where state lives and which ports to use.
#   dev : persistent (.data/temporal.db), default ports, worker + main job.
#   test: in-memory Temporal and its own ports, so `make test` never touches
#         (or is disturbed by) a running `make dev` stack. Both share the one
#         PostgreSQL server; tests create a database per test.
load_profile() {
	PROFILE=$1
	case $PROFILE in
	dev)
		DATA_DIR="$ROOT/.data"
		TEMPORAL_PORT=7233 UI_PORT=8233 STRIPE_PORT=12111
		TEMPORAL_DB="$DATA_DIR/temporal.db"
		APP_DB=cartwright
		;;
	test)
		DATA_DIR="$ROOT/.data/test"
		TEMPORAL_PORT=7243 UI_PORT=8243 STRIPE_PORT=12112
		TEMPORAL_DB=""
		APP_DB=cartwright_test
		;;
	*) die "unknown profile '$PROFILE' (want dev or test)" ;;
	esac
	# Escape hatch for port clashes (another checkout's stack on the same
	# machine): STACK_TEMPORAL_PORT=7253 STACK_UI_PORT=8253 ... make test.
	# A stack on other ports is another stack: it gets its own state folder,
	# so its pid files never mix with the default one's.
	if [ -n "${STACK_TEMPORAL_PORT:-}${STACK_UI_PORT:-}${STACK_STRIPE_PORT:-}" ]; then
		TEMPORAL_PORT=${STACK_TEMPORAL_PORT:-$TEMPORAL_PORT}
		UI_PORT=${STACK_UI_PORT:-$UI_PORT}
		STRIPE_PORT=${STACK_STRIPE_PORT:-$STRIPE_PORT}
		DATA_DIR="$ROOT/.data/$PROFILE-$TEMPORAL_PORT-$UI_PORT-$STRIPE_PORT"
		[ -z "$TEMPORAL_DB" ] || TEMPORAL_DB="$DATA_DIR/temporal.db"
	fi
	# The worker's Stripe webhook receiver: CARTWRIGHT_WEBHOOK_ADDR when set,
	# else the Temporal port + 855 (dev 8088, test 8098), so a second stack
	# on other ports never fights the first for it.
	WEBHOOK_ADDR=${CARTWRIGHT_WEBHOOK_ADDR:-127.0.0.1:$((TEMPORAL_PORT + 855))}
	# The worker's codec server, the same way: Temporal port + 856 (dev 8089,
	# test 8099); the dev server's UI is started pointing at it.
	CODEC_PORT=$((TEMPORAL_PORT + 856))
	# The MCP gateway (`starter mcp serve`): CARTWRIGHT_MCP_ADDR when set,
	# else the Temporal port + 857 (dev 8090), for the same reason.
	MCP_ADDR=${CARTWRIGHT_MCP_ADDR:-127.0.0.1:$((TEMPORAL_PORT + 857))}
	# Prometheus /metrics of the worker (+858, dev 8091) and of the MCP
	# gateway (+859, dev 8092).
	METRICS_ADDR=${CARTWRIGHT_METRICS_ADDR:-127.0.0.1:$((TEMPORAL_PORT + 858))}
	MCP_METRICS_ADDR=${CARTWRIGHT_MCP_METRICS_ADDR:-127.0.0.1:$((TEMPORAL_PORT + 859))}
	PID_DIR="$DATA_DIR/pids"
	LOG_DIR="$DATA_DIR/logs"
	ENV_FILE="$DATA_DIR/env"
	mkdir -p "$PID_DIR" "$LOG_DIR"
}

# secret_file PATH CMD...: the content of PATH, generated by CMD on first use
# (dev-only secrets must survive restarts: evidence encrypted with one key
# must still decrypt after `make down && make dev`).
secret_file() {
	local f=$1; shift
	if [ ! -s "$f" ]; then
		(umask 077 && "$@" >"$f")
	fi
	chmod 600 "$f" # also one an older checkout wrote world-readable
	cat "$f"
}

# lock_secrets: the stack's folder and every secret in it readable by its
# owner only (.data/env holds every dev secret in one file).
lock_secrets() {
	local f
	chmod 700 "$DATA_DIR"
	for f in "$ENV_FILE" "$DATA_DIR"/*.env "$DATA_DIR"/*.key "$DATA_DIR"/*.secret "$DATA_DIR"/*.token; do
		if [ -e "$f" ]; then chmod 600 "$f"; fi
	done
}

# ed25519_public: the base64 Ed25519 public key of the base64 32-byte seed
# $1 (the seed wrapped as PKCS#8 for openssl; the key is the last 32 bytes
# of its SubjectPublicKeyInfo). The rows' verifiers get only this
# (docs/evidence.md#row-signatures).
ed25519_public() {
	(printf '\x30\x2e\x02\x01\x00\x30\x05\x06\x03\x2b\x65\x70\x04\x22\x04\x20'; printf '%s' "$1" | base64 -d) |
		openssl pkey -inform DER -pubout -outform DER | tail -c 32 | base64
}

# write_env: the environment the worker, starter and tests see, as a file
# you can `source` (`. .data/env`) to talk to the same stack by hand.
write_env() {
	local key whsec pkey skey qkey csecret wsign gsign wpub gpub
	key=$(secret_file "$DATA_DIR/evidence.key" sh -c 'head -c 32 /dev/urandom | base64')
	wsign=$(secret_file "$DATA_DIR/worker-signing.key" sh -c 'head -c 32 /dev/urandom | base64')
	gsign=$(secret_file "$DATA_DIR/gateway-signing.key" sh -c 'head -c 32 /dev/urandom | base64')
	wpub=$(ed25519_public "$wsign")
	gpub=$(ed25519_public "$gsign")
	pkey=$(secret_file "$DATA_DIR/payload.key" sh -c 'head -c 32 /dev/urandom | base64')
	skey=$(secret_file "$DATA_DIR/seal.key" sh -c 'head -c 32 /dev/urandom | base64')
	qkey=$(secret_file "$DATA_DIR/quote-seal.key" sh -c 'head -c 32 /dev/urandom | base64')
	csecret=$(secret_file "$DATA_DIR/codec.secret" sh -c 'head -c 24 /dev/urandom | base64 | tr -d "/+="')
	# shellcheck disable=SC2016 # expanded by the inner sh, on purpose
	whsec=$(secret_file "$DATA_DIR/stripe-webhook.secret" sh -c 'printf "whsec_%s\n" "$(head -c 24 /dev/urandom | base64 | tr -d "/+=")"')
	# Created owner-only: the file holds every secret below.
	rm -f "$ENV_FILE"
	(umask 077 && : >"$ENV_FILE")
	cat >>"$ENV_FILE" <<-EOT
		# generated by scripts/ for the '$PROFILE' stack; do not edit
		export CARTWRIGHT_PG_DSN='postgres://cartwright:cartwright@127.0.0.1:$PG_PORT/$APP_DB?sslmode=disable'
		export TEMPORAL_ADDRESS='127.0.0.1:$TEMPORAL_PORT'
		export TEMPORAL_NAMESPACE='default'
		export CARTWRIGHT_TASK_QUEUE='cartwright'
		export STRIPE_API_BASE='http://127.0.0.1:$STRIPE_PORT'
		export STRIPE_SECRET_KEY='sk_test_123'
		export STRIPE_WEBHOOK_SECRET='$whsec'
		export CARTWRIGHT_EVIDENCE_KEY='$key'
		export CARTWRIGHT_WORKER_SIGNING_KEYS='dev-worker-1:$wsign'
		export CARTWRIGHT_GATEWAY_SIGNING_KEYS='dev-gateway-1:$gsign'
		export CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS='dev-worker-1:$wpub'
		export CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS='dev-gateway-1:$gpub'
		export CARTWRIGHT_WEBHOOK_ADDR='$WEBHOOK_ADDR'
		export CARTWRIGHT_UI_URL='http://localhost:$UI_PORT'
		export CARTWRIGHT_PAYLOAD_KEYS='dev-1:$pkey'
		export CARTWRIGHT_SEAL_KEYS='dev-seal-1:$skey'
		export CARTWRIGHT_QUOTE_SEAL_KEYS='dev-quote-1:$qkey'
		export CARTWRIGHT_PG_ISSUER_DSN='$(issuer_dsn)'
		export CARTWRIGHT_CODEC_ADDR='127.0.0.1:$CODEC_PORT'
		export CARTWRIGHT_CODEC_URL='http://127.0.0.1:$CODEC_PORT/codec'
		export CARTWRIGHT_CODEC_CORS_ORIGINS='http://localhost:$UI_PORT,http://127.0.0.1:$UI_PORT'
		export CARTWRIGHT_CODEC_SECRET='$csecret'
		export CARTWRIGHT_MCP_ADDR='$MCP_ADDR'
		export CARTWRIGHT_MCP_URL='http://$MCP_ADDR/mcp'
		export CARTWRIGHT_METRICS_ADDR='$METRICS_ADDR'
		export CARTWRIGHT_MCP_METRICS_ADDR='$MCP_METRICS_ADDR'
		export CARTWRIGHT_TEMPORAL_BIN='$BIN/temporal'
		export CARTWRIGHT_STRIPE_MOCK_BIN='$BIN/stripe-mock'
	EOT
	# The dev agent's MCP token, once `make dev` created it (dev.sh).
	if [ -s "$DATA_DIR/mcp-dev.token" ]; then
		echo "export CARTWRIGHT_MCP_TOKEN='$(cat "$DATA_DIR/mcp-dev.token")'" >>"$ENV_FILE"
	fi
	if [ "$PROFILE" = test ]; then
		cat >>"$ENV_FILE" <<-EOT
			export CARTWRIGHT_TEST_PG_DSN='postgres://cartwright_admin:cartwright_admin@127.0.0.1:$PG_PORT/postgres?sslmode=disable'
			export CARTWRIGHT_INTEGRATION=1
		EOT
		test_env_extra
	fi
	write_process_envs
	lock_secrets
}

# What each long-running process holds (docs/operators.md#keys-and-grants-per-process).
# SECRET_VARS are every secret a stack's .data/env may carry; a process is
# started from its own file, $DATA_DIR/<process>.env: .data/env without the
# secrets its list does not name. .data/env itself is the operator's shell
# (every starter command, the tests). A new secret goes into SECRET_VARS,
# into the list of each process that needs it, and into the doc's table;
# internal/config's TestProcessesHoldOnlyTheirKeys reads the files written
# here, docker-compose.yml and the Helm chart against that table.
SECRET_VARS=(CARTWRIGHT_PG_DSN CARTWRIGHT_PG_OWNER_DSN CARTWRIGHT_PG_ISSUER_DSN CARTWRIGHT_TEST_PG_DSN
	CARTWRIGHT_CLUSTER_PG_ADMIN_DSN CARTWRIGHT_EVIDENCE_KEY CARTWRIGHT_PAYLOAD_KEYS CARTWRIGHT_SEAL_KEYS
	CARTWRIGHT_QUOTE_SEAL_KEYS CARTWRIGHT_CODEC_SECRET STRIPE_SECRET_KEY STRIPE_WEBHOOK_SECRET
	CARTWRIGHT_MCP_TOKEN CARTWRIGHT_STAFF_TOKEN TEMPORAL_API_KEY
	CARTWRIGHT_WORKER_SIGNING_KEYS CARTWRIGHT_GATEWAY_SIGNING_KEYS)
# The worker of make dev and make cluster takes every role (workflows,
# activities, webhook, schedules, codec): the union of theirs.
WORKER_HOLDS=(CARTWRIGHT_PG_DSN CARTWRIGHT_EVIDENCE_KEY CARTWRIGHT_PAYLOAD_KEYS CARTWRIGHT_SEAL_KEYS
	CARTWRIGHT_QUOTE_SEAL_KEYS CARTWRIGHT_CODEC_SECRET STRIPE_SECRET_KEY STRIPE_WEBHOOK_SECRET TEMPORAL_API_KEY
	CARTWRIGHT_WORKER_SIGNING_KEYS)
# The MCP gateway: no seal ring of either kind, no codec secret, no
# webhook secret, no identity-issuing or owner DSN.
GATEWAY_HOLDS=(CARTWRIGHT_PG_DSN CARTWRIGHT_EVIDENCE_KEY CARTWRIGHT_PAYLOAD_KEYS STRIPE_SECRET_KEY TEMPORAL_API_KEY
	CARTWRIGHT_GATEWAY_SIGNING_KEYS)

# write_process_env NAME HOLDS...: $DATA_DIR/NAME.env, the lines of
# $ENV_FILE but those exporting a secret HOLDS does not name.
write_process_env() {
	local name=$1 v re drop=()
	shift
	for v in "${SECRET_VARS[@]}"; do
		case " $* " in *" $v "*) ;; *) drop+=("$v") ;; esac
	done
	re=$(IFS='|' && echo "${drop[*]}")
	rm -f "$DATA_DIR/$name.env"
	(umask 077 && grep -Ev "^export ($re)=" "$ENV_FILE" >"$DATA_DIR/$name.env")
}

# write_process_envs: the worker's and the gateway's files, from $ENV_FILE
# as it stands (write_cluster_env calls it again after adding its lines).
write_process_envs() {
	write_process_env worker "${WORKER_HOLDS[@]}"
	write_process_env gateway "${GATEWAY_HOLDS[@]}"
}

# stack_up: everything but the worker, for the loaded profile.
stack_up() {
	ensure_tools
	ensure_postgres_installed
	hold_postgres
	ensure_postgres_running
	ensure_pg_roles
	start_temporal "$TEMPORAL_PORT" "$UI_PORT" "$TEMPORAL_DB"
	register_search_attributes "127.0.0.1:$TEMPORAL_PORT"
	start_stripe_mock "$STRIPE_PORT"
	write_env
}

# stack_down: stop exactly what this profile started, worker first.
stack_down() {
	stop_pid mcp "$BIN/mcp-gateway"
	stop_pid worker "$BIN/worker"
	rm -f "$PID_DIR/worker.sha256"
	stop_pid stripe-mock "$BIN/stripe-mock"
	stop_pid temporal "$BIN/temporal"
	stop_postgres_if_ours
}

stack_status() {
	local n b
	for n in temporal:temporal stripe-mock:stripe-mock worker:worker; do
		b=${n#*:}; n=${n%%:*}
		if pid_alive "$n" "$BIN/$b"; then
			echo "$PROFILE $n: running (pid $(cat "$PID_DIR/$n.pid"))"
		else
			echo "$PROFILE $n: not started by us"
		fi
	done
	if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
		echo "$PROFILE postgres: up on :$PG_PORT$([ -f "$PID_DIR/postgres.cluster" ] && echo ' (started by us)')"
	else
		echo "$PROFILE postgres: down"
	fi
}

# test_env_extra: the names internal/testenv reads (it falls back to the same
# ports, but exporting them keeps one source of truth).
test_env_extra() {
	cat >>"$ENV_FILE" <<-EOT
		export CARTWRIGHT_TEST_TEMPORAL_ADDRESS='127.0.0.1:$TEMPORAL_PORT'
		export CARTWRIGHT_TEST_STRIPE_API_BASE='http://127.0.0.1:$STRIPE_PORT'
	EOT
}

# dev_summary: what `make dev` prints once its stack is up, every path and
# port the loaded profile's (a stack on other ports has its own folder).
dev_summary() {
	cat <<EOF

  cartwright dev stack is up.
    Temporal Web UI   http://localhost:$UI_PORT   (payloads decoded after signing in at the codec server)
    codec server      http://localhost:$CODEC_PORT/codec/login   (dev secret: ${DATA_DIR#"$ROOT"/}/codec.secret)
    Temporal gRPC     127.0.0.1:$TEMPORAL_PORT  (state: ${TEMPORAL_DB#"$ROOT"/})
    PostgreSQL        postgres://cartwright:cartwright@127.0.0.1:$PG_PORT/$APP_DB
    stripe-mock       http://127.0.0.1:$STRIPE_PORT
    MCP gateway       http://$MCP_ADDR/mcp  (token: \$CARTWRIGHT_MCP_TOKEN in ${ENV_FILE#"$ROOT"/})
    metrics           http://$METRICS_ADDR/metrics, gateway http://$MCP_METRICS_ADDR/metrics  (.bin/starter stats)
    logs              ${LOG_DIR#"$ROOT"/}/   (temporal.log, stripe-mock.log, worker.log)
    environment       . ${ENV_FILE#"$ROOT"/}   (then .bin/starter ..., .bin/temporal ...)
  Stop it all with: make down

EOF
}
