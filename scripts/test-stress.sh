#!/usr/bin/env bash
# test-stress.sh — what `make test-stress` runs: `make test` while
# stress-ng keeps STRESS_CPUS CPUs (default 2) busy, so waits that only
# pass on an idle machine show up (docs/testing.md#under-load-make-test-stress).
# Deadlines stretch by CARTWRIGHT_TEST_TIME_SCALE (default 3 here) and the
# integration run's go test -timeout by the same factor (TEST_TIMEOUT,
# default 60m here); the tests still assert the same outcomes. The load is
# stopped when the tests end, also on failure or Ctrl-C.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

STRESS_CPUS=${STRESS_CPUS:-2}
export CARTWRIGHT_TEST_TIME_SCALE=${CARTWRIGHT_TEST_TIME_SCALE:-3}
export TEST_TIMEOUT=${TEST_TIMEOUT:-60m}

if ! command -v stress-ng >/dev/null; then
	log "installing stress-ng from Debian's packages (make test-stress needs it)"
	as_root apt-get update -qq || die "apt-get update failed (no network or no Debian mirror?): cannot install stress-ng"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null ||
		die "apt-get install stress-ng failed"
fi

# stop_load ends the one stress-ng run this script started: its own
# process group (setsid), workers included.
stop_load() {
	if [ -n "${STRESS_PID:-}" ] && kill -0 "$STRESS_PID" 2>/dev/null; then
		log "stopping the CPU load (stress-ng, pid $STRESS_PID)"
		kill -TERM -- "-$STRESS_PID" 2>/dev/null || true
		wait "$STRESS_PID" 2>/dev/null || true
	fi
}
trap stop_load EXIT
# make runs in the background so a signal to this script is handled at
# once (a foreground child would defer the trap until it ends).
trap 'kill -TERM "${MAKE_PID:-}" 2>/dev/null; exit 130' INT TERM

# --timeout: a safety net should this script be killed without its trap.
setsid stress-ng --cpu "$STRESS_CPUS" --timeout 4h --quiet </dev/null &
STRESS_PID=$!
log "CPU load: stress-ng --cpu $STRESS_CPUS (pid $STRESS_PID); CARTWRIGHT_TEST_TIME_SCALE=$CARTWRIGHT_TEST_TIME_SCALE, TEST_TIMEOUT=$TEST_TIMEOUT; load average $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
status=0
make --no-print-directory test &
MAKE_PID=$!
wait "$MAKE_PID" || status=$?
log "make test under load: exit $status after $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
