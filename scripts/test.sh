#!/usr/bin/env bash
# test.sh unit|integration|fuzz|bench — what `make test` (and `make bench`) runs, step by step.
#   unit        go test -short: no services; testenv skips integration tests.
#   integration the test stack (in-memory Temporal on :7243, UI :8243,
#               stripe-mock on :12112, the shared PostgreSQL) is started
#               unless already up, the whole suite runs against it (fuzz seed
#               corpora in testdata/fuzz included: plain go test runs them),
#               and whatever this run started is stopped again, even on
#               failure. WITH_UI_TEST=1 runs the browser test
#               (scripts/test-ui.sh run) after the suite, on the same stack.
#   fuzz        a short coverage-guided run of each target in FUZZ_TARGETS.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

GOTEST_FLAGS=${GOTEST_FLAGS-}
TEST_PKGS=${TEST_PKGS:-./...}
TEST_TIMEOUT=${TEST_TIMEOUT:-20m}
# "pkg:FuzzName" pairs; go test -fuzz takes one package and one target a time.
FUZZ_TARGETS=${FUZZ_TARGETS-./toolkit:FuzzDecodeToolCall}
# A count of executions, not a duration: with a duration, Go's fuzz
# coordinator (before Go 1.27, golang/go#75804) can report "context deadline
# exceeded" as a failure of the target when the deadline races a worker's
# shutdown (seen twice in clean-clone CI runs, no input failing). A count
# has no deadline to race. 100000 executions take 3–20 s per target here.
FUZZ_TIME=${FUZZ_TIME:-100000x}

unit() {
	log "unit tests (go test -short)"
	# shellcheck disable=SC2086
	env -u CARTWRIGHT_INTEGRATION -u CARTWRIGHT_TEST_PG_DSN \
		go test -short $GOTEST_FLAGS $TEST_PKGS
}

# Several `make test` runs may share one checkout (and so one test stack).
# Each run holds a shared lock on $DATA_DIR/stack.lock while it tests; the
# stack is started under an exclusive start lock so only one run starts it;
# and it is stopped by whichever run finishes last (the one that then gets
# the lock exclusively), and only if a `make test` started it: a stack kept
# warm with `scripts/stack.sh test up` is left running.
integration() {
	hold_stack
	log "integration tests against Temporal :$TEMPORAL_PORT, stripe-mock :$STRIPE_PORT, PostgreSQL :$PG_PORT"
	# shellcheck disable=SC2086
	go test -count=1 -timeout "$TEST_TIMEOUT" $GOTEST_FLAGS $TEST_PKGS
	# `make test`: the browser test next, on the same stack (its setup ran
	# before: scripts/test-ui.sh setup).
	if [ -n "${WITH_UI_TEST-}" ]; then
		"$ROOT/scripts/test-ui.sh" run
	fi
}

# hold_stack: the test stack up (started unless already running) and its
# environment loaded, held until this script exits.
hold_stack() {
	load_profile test
	local marker="$PID_DIR/stop-after-tests"
	exec 8>"$DATA_DIR/start.lock" 9>"$DATA_DIR/stack.lock"
	flock -s 9
	flock -x 8
	if pid_alive temporal "$BIN/temporal" || port_open 127.0.0.1 "$TEMPORAL_PORT"; then
		log "reusing the running test stack"
	else
		touch "$marker"
	fi
	# Stop what we started however we leave (failure, Ctrl-C).
	trap 'release_stack' EXIT
	stack_up
	flock -u 8
	# shellcheck disable=SC1090
	. "$ENV_FILE"
}

# bench: `make bench` (docs/performance.md#measuring-against-the-floor-make-bench). A Temporal server of its
# own — BENCH_TARGET=dev (default): a dev server in memory with the stack's
# dynamic config on BENCH_PORT; BENCH_TARGET=cluster: Temporal's four
# services on a private PostgreSQL with mTLS (scripts/cluster.sh,
# .data/cluster-bench, ports from BENCH_CLUSTER_BASE, the same dynamic
# config) — the test stack's PostgreSQL for the application database, and
# worker/scaletest's TestBenchAgainstFloor: the floor (worker/scaletest/floor,
# in this repository) and draft orders interleaved, one table, audits, and
# the worker SIGKILLed at 16 in flight.
BENCH_PORT=${BENCH_PORT:-7290}
BENCH_TARGET=${BENCH_TARGET:-dev}
BENCH_CLUSTER_BASE=${BENCH_CLUSTER_BASE:-7425}
# What a cluster bench runs (see bench below); the dev server has no
# authorizer, so only the floor there.
if [ "$BENCH_TARGET" = cluster ]; then BENCH_PARTS=${BENCH_PARTS:-floor auth}; else BENCH_PARTS=floor; fi
bench() {
	hold_stack
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cartwright-bench-XXXXXX")
	case $BENCH_TARGET in
	dev) start_bench_dev_server "$dir" ;;
	cluster) start_bench_cluster "$dir" ;;
	*) die "BENCH_TARGET=$BENCH_TARGET: want dev or cluster" ;;
	esac
	log "bench against Temporal $BENCH_ADDR ($BENCH_TARGET; logs in $dir), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	export CARTWRIGHT_TEST_TEMPORAL_ADDRESS="$BENCH_ADDR" CARTWRIGHT_BENCH=1 CARTWRIGHT_BENCH_OUT="$dir/table.md" \
		CARTWRIGHT_BENCH_SERVER_PID="${BENCH_SERVER_PID:-}" CARTWRIGHT_BENCH_SERVER_PIDS="${BENCH_SERVER_PIDS:-}"
	# BENCH_PARTS (cluster): floor, the table against the floor
	# (TestBenchAgainstFloor), and auth, authorization off against on
	# (TestBenchAuthorizationCost); `BENCH_PARTS=auth` alone is the
	# comparison's quick check.
	if [[ " $BENCH_PARTS " == *" floor "* ]]; then
		go test -count=1 -timeout 60m -v -run "${BENCH_TEST:-^TestBenchAgainstFloor$}" ./worker/scaletest/ >"$dir/go-test.log" 2>&1 ||
			{ tail -n 60 "$dir/go-test.log" >&2; die "the bench failed; full log: $dir/go-test.log"; }
		grep -E '^\s+bench.*_test.go:[0-9]+: ' "$dir/go-test.log" >&2 || true
	fi
	if [[ " $BENCH_PARTS " == *" auth "* ]]; then
		log "authorization off against on (frontend restarted between the sides), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		CARTWRIGHT_BENCH_AUTH_SWITCH="$ROOT/scripts/cluster.sh frontend-auth" CARTWRIGHT_BENCH_CLUSTER_DIR="$CLUSTER_DIR" \
			CARTWRIGHT_BENCH_OIDC_TOKEN_URL="$BENCH_TOKEN_URL" \
			CARTWRIGHT_BENCH_AUTH_ROUNDS="${BENCH_AUTH_ROUNDS:-3}" CARTWRIGHT_BENCH_AUTH_N="${BENCH_AUTH_N:-200}" \
			go test -count=1 -timeout 60m -v -run '^TestBenchAuthorizationCost$' ./worker/scaletest/ >"$dir/go-test-auth.log" 2>&1 ||
			{ tail -n 60 "$dir/go-test-auth.log" >&2; die "the authorization bench failed; full log: $dir/go-test-auth.log"; }
		grep -E '^\s+bench.*_test.go:[0-9]+: ' "$dir/go-test-auth.log" >&2 || true
	fi
	cat "$dir/table.md"
}

start_bench_dev_server() {
	port_open 127.0.0.1 "$BENCH_PORT" && die "something listens on :$BENCH_PORT already (set BENCH_PORT)"
	"$BIN/temporal" server start-dev --ip 127.0.0.1 --port "$BENCH_PORT" --headless --log-level warn \
		"${TEMPORAL_DYNAMIC_CONFIG[@]}" >"$1/temporal.log" 2>&1 &
	BENCH_SERVER_PID=$! BENCH_ADDR=127.0.0.1:$BENCH_PORT
	trap 'stop_bench_server; release_stack' EXIT
	wait_until 90 "bench Temporal (127.0.0.1:$BENCH_PORT)" temporal_healthy "127.0.0.1:$BENCH_PORT" ||
		die "the bench's Temporal did not become healthy; see $1/temporal.log"
	register_search_attributes "127.0.0.1:$BENCH_PORT"
}

# start_bench_cluster: the bench's own cluster, stopped when the bench
# ends; the processes measured are its four services and its PostgreSQL
# (CARTWRIGHT_BENCH_SERVER_PIDS), the clients and workers use its client
# certificate (TEMPORAL_TLS_*). With BENCH_PARTS auth it runs the provider
# too, and its frontend starts without the authorizer (the table against
# the floor is measured so); TestBenchAuthorizationCost switches it.
start_bench_cluster() {
	local auth=0
	[[ " $BENCH_PARTS " != *" auth "* ]] || auth=1
	export CLUSTER_DIR="$ROOT/.data/cluster-bench" CLUSTER_PORT_BASE="$BENCH_CLUSTER_BASE" \
		CLUSTER_PG=private CLUSTER_UI=0 CLUSTER_APPS=0 CLUSTER_AUTH=$auth
	trap 'stop_bench_cluster; release_stack' EXIT
	"$ROOT/scripts/cluster.sh" up >"$1/cluster-up.log" 2>&1 ||
		{ tail -n 30 "$1/cluster-up.log" >&2; die "the bench's cluster did not come up; log $1/cluster-up.log"; }
	if [ "$auth" = 1 ]; then
		"$ROOT/scripts/cluster.sh" frontend-auth off >>"$1/cluster-up.log" 2>&1 ||
			{ tail -n 30 "$1/cluster-up.log" >&2; die "the bench's frontend did not restart; log $1/cluster-up.log"; }
		BENCH_TOKEN_URL=$(sed -n "s/^export CARTWRIGHT_OIDC_TOKEN_URL='\(.*\)'$/\1/p" "$CLUSTER_DIR/env")
	fi
	BENCH_ADDR=127.0.0.1:$BENCH_CLUSTER_BASE
	local s pids=""
	for s in frontend history matching worker; do
		pids+="$s=$(cat "$CLUSTER_DIR/pids/$s.pid"),"
	done
	BENCH_SERVER_PIDS="${pids}postgres=$(head -n1 "$CLUSTER_DIR/pg/data/postmaster.pid")"
	eval "$(grep '^export TEMPORAL_TLS_' "$CLUSTER_DIR/env")"
}

stop_bench_cluster() {
	[ "${BENCH_KEEP_CLUSTER:-0}" = 1 ] || "$ROOT/scripts/cluster.sh" down >/dev/null 2>&1 || true
}

# stop_bench_server stops the one dev server bench started (its own pid).
stop_bench_server() {
	if [ -n "${BENCH_SERVER_PID:-}" ] && kill -0 "$BENCH_SERVER_PID" 2>/dev/null; then
		kill "$BENCH_SERVER_PID"
		wait "$BENCH_SERVER_PID" 2>/dev/null || true
	fi
}

release_stack() {
	local marker="$PID_DIR/stop-after-tests"
	flock -u 9
	if [ -f "$marker" ] && flock -x -n 9; then
		stack_down
		rm -f "$marker"
	elif [ -f "$marker" ]; then
		log "another test run still uses the test stack; it will stop it"
	fi
}

fuzz() {
	local t pkg name
	for t in $FUZZ_TARGETS; do
		pkg=${t%%:*} name=${t#*:}
		# A target that vanished (renamed, moved) must fail loudly rather
		# than let CI pass without fuzzing.
		local list
		list=$(go test -list "^$name\$" "$pkg") || die "go test -list $pkg failed: $list"
		grep -qx "$name" <<<"$list" ||
			die "fuzz target $name not found in $pkg (update FUZZ_TARGETS in the Makefile)"
		log "fuzzing $pkg $name, -fuzztime $FUZZ_TIME"
		# -fuzzminimizetime 0: no minimising of new inputs. In a short run
		# the deadline can fall while the engine minimises a newly
		# interesting input, and go test then fails the target with
		# "context deadline exceeded" although nothing failed (seen in CI:
		# execs stalled at 0/s after "new interesting"). A crasher is still
		# reported and saved under testdata/fuzz, only not shrunk.
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZ_TIME" -fuzzminimizetime 0 "$pkg"
	done
}

case ${1:-} in
unit | integration | fuzz | bench) "$1" ;;
*) die "usage: $0 unit|integration|fuzz|bench" ;;
esac
