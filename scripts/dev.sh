#!/usr/bin/env bash
# dev.sh — what `make dev` runs: the dev stack (PostgreSQL, Temporal dev
# server with UI on :8233, stripe-mock), the worker, then the main job.
# Safe to run again: running services are detected and reused; the worker is
# restarted only when its binary changed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
load_profile dev

# DEV_MAIN_JOB: the starter sub-command (plus arguments) run at the end.
# Set it empty to skip (`make dev DEV_MAIN_JOB=`).
DEV_MAIN_JOB=${DEV_MAIN_JOB-sample}

# has_main DIR: the directory holds a buildable main package (the worker and
# starter are written in parallel with these scripts and may not exist yet).
has_main() {
	[ "$(cd "$ROOT" && go list -f '{{.Name}}' "./$1" 2>/dev/null)" = main ]
}

# worker_polling SINCE: a poller polled our task queue at or after SINCE
# (UTC, RFC 3339), i.e. the worker we just started really connected. Pollers
# of a previous worker stay listed for minutes, hence the time check; the
# timestamps share one format, so comparing them as strings is enough.
worker_polling() {
	"$BIN/temporal" task-queue describe --address "127.0.0.1:$TEMPORAL_PORT" \
		--task-queue cartwright -o json 2>/dev/null |
		awk -v since="$1" -F'"' '/"lastAccessTime"/ && $4 >= since { ok=1 } END { exit !ok }'
}

start_worker() {
	if ! has_main worker; then
		warn "./worker has no main package yet; not starting a worker"
		return 0
	fi
	log "building worker"
	go_build "$BIN/worker" ./worker
	# go build rewrites the binary every time (new mtime), but the bytes are
	# reproducible, so a content hash tells whether the code changed.
	local sum
	sum=$(sha256sum "$BIN/worker" | cut -d' ' -f1)
	if pid_alive worker "$BIN/worker"; then
		if [ "$sum" != "$(cat "$PID_DIR/worker.sha256" 2>/dev/null)" ]; then
			log "worker code changed; restarting it"
			stop_pid worker "$BIN/worker"
		else
			log "worker already running (pid $(cat "$PID_DIR/worker.pid"))"
			return 0
		fi
	fi
	local since
	since=$(date -u +%Y-%m-%dT%H:%M:%S)
	# Subshell: the env file must not leak into this script's environment.
	# The worker's own file: .data/env without what it must not hold
	# (docs/operators.md#keys-and-grants-per-process).
	# shellcheck disable=SC1091 # generated file
	(. "$DATA_DIR/worker.env" && start_bg worker "$BIN/worker")
	echo "$sum" >"$PID_DIR/worker.sha256"
	if ! wait_until 60 "worker (polling task queue 'cartwright')" worker_polling "$since"; then
		pid_alive worker "$BIN/worker" || { tail -n 30 "$LOG_DIR/worker.log" >&2; die "worker exited; log above"; }
		die "worker runs but does not poll task queue 'cartwright'; see $LOG_DIR/worker.log"
	fi
}

# mcp_healthy: the gateway answers on its address.
mcp_healthy() {
	port_open "${MCP_ADDR%:*}" "${MCP_ADDR##*:}"
}

# start_mcp: the MCP gateway (`starter mcp serve`, as its own copy of the
# starter binary so its pid file and restarts are its own) beside the
# worker, and a dev agent token created once (only its hash is stored;
# the token itself stays in .data/, written into .data/env).
start_mcp() {
	if ! has_main starter; then
		warn "./starter has no main package yet; not starting the MCP gateway"
		return 0
	fi
	go_build "$BIN/starter" ./starter
	if ! "$BIN/starter" mcp --help >/dev/null 2>&1; then
		warn "starter has no 'mcp' command yet; not starting the MCP gateway"
		return 0
	fi
	if [ ! -s "$DATA_DIR/mcp-dev.token" ]; then
		log "creating the dev agent's MCP token"
		local out
		# The token is the first line of the output (the second says it is
		# not shown again).
		# shellcheck disable=SC1090 # generated file
		out=$(. "$ENV_FILE" && "$BIN/starter" mcp token create --actor dev-agent) || die "could not create the dev agent's MCP token"
		(umask 077 && printf '%s\n' "${out%%$'\n'*}" >"$DATA_DIR/mcp-dev.token")
		write_env
	fi
	local sum
	sum=$(sha256sum "$BIN/starter" | cut -d' ' -f1)
	if pid_alive mcp "$BIN/mcp-gateway"; then
		if [ "$sum" = "$(cat "$PID_DIR/mcp.sha256" 2>/dev/null)" ]; then
			log "MCP gateway already running (pid $(cat "$PID_DIR/mcp.pid"))"
			return 0
		fi
		log "starter code changed; restarting the MCP gateway"
		stop_pid mcp "$BIN/mcp-gateway"
	fi
	cp "$BIN/starter" "$BIN/mcp-gateway"
	# Its own file: no seal ring, codec secret or issuing DSN
	# (docs/operators.md#keys-and-grants-per-process).
	# shellcheck disable=SC1091 # generated file
	(. "$DATA_DIR/gateway.env" && start_bg mcp "$BIN/mcp-gateway" mcp serve --timeout 60s)
	echo "$sum" >"$PID_DIR/mcp.sha256"
	if ! wait_until 90 "MCP gateway (http://$MCP_ADDR/mcp)" mcp_healthy; then
		tail -n 30 "$LOG_DIR/mcp.log" >&2
		die "the MCP gateway did not come up; log above"
	fi
}

run_main_job() {
	local sub=${DEV_MAIN_JOB%% *}
	[ -n "$DEV_MAIN_JOB" ] || { log "DEV_MAIN_JOB is empty; skipping the main job"; return 0; }
	if ! has_main starter; then
		warn "./starter has no main package yet; skipping the main job"
		return 0
	fi
	go_build "$BIN/starter" ./starter
	# Only run a sub-command the starter actually has (cobra lists them in
	# --help as "  name   description").
	if ! "$BIN/starter" --help 2>&1 | grep -Eq "^[[:space:]]+$sub([[:space:]]|$)"; then
		warn "starter has no '$sub' command yet; skipping the main job"
		return 0
	fi
	log "running main job: starter $DEV_MAIN_JOB"
	# shellcheck disable=SC1090,SC2086 # generated file; DEV_MAIN_JOB is a command line on purpose
	(. "$ENV_FILE" && "$BIN/starter" $DEV_MAIN_JOB)
}

stack_up
adopt_legacy_app_db
migrate_app_db
start_worker
start_mcp
run_main_job

cat <<EOF

  cartwright dev stack is up.
    Temporal Web UI   http://localhost:$UI_PORT   (payloads decoded after signing in at the codec server)
    codec server      http://localhost:$CODEC_PORT/codec/login   (dev secret: .data/codec.secret)
    Temporal gRPC     127.0.0.1:$TEMPORAL_PORT  (state: ${TEMPORAL_DB#"$ROOT"/})
    PostgreSQL        postgres://cartwright:cartwright@127.0.0.1:$PG_PORT/cartwright
    stripe-mock       http://127.0.0.1:$STRIPE_PORT
    MCP gateway       http://$MCP_ADDR/mcp  (token: \$CARTWRIGHT_MCP_TOKEN in ${ENV_FILE#"$ROOT"/})
    metrics           http://$METRICS_ADDR/metrics, gateway http://$MCP_METRICS_ADDR/metrics  (.bin/starter stats)
    logs              ${LOG_DIR#"$ROOT"/}/   (temporal.log, stripe-mock.log, worker.log)
    environment       . ${ENV_FILE#"$ROOT"/}   (then .bin/starter ..., .bin/temporal ...)
  Stop it all with: make down

EOF
