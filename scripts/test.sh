#!/usr/bin/env bash
# test.sh unit|integration|fuzz — what `make test` runs, step by step.
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
FUZZ_TIME=${FUZZ_TIME:-10s}

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
	log "integration tests against Temporal :$TEMPORAL_PORT, stripe-mock :$STRIPE_PORT, PostgreSQL :$PG_PORT"
	# shellcheck disable=SC1090
	. "$ENV_FILE"
	# shellcheck disable=SC2086
	go test -count=1 -timeout "$TEST_TIMEOUT" $GOTEST_FLAGS $TEST_PKGS
	# `make test`: the browser test next, on the same stack (its setup ran
	# before: scripts/test-ui.sh setup).
	if [ -n "${WITH_UI_TEST-}" ]; then
		"$ROOT/scripts/test-ui.sh" run
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
		log "fuzzing $pkg $name for $FUZZ_TIME"
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZ_TIME" "$pkg"
	done
}

case ${1:-} in
unit | integration | fuzz) "$1" ;;
*) die "usage: $0 unit|integration|fuzz" ;;
esac
