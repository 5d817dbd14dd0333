#!/usr/bin/env bash
# stack.sh dev|test up|down|status|env — the services without the worker.
# `make dev`/`make test` call the higher-level dev.sh/test.sh; this is the
# building block and a handy manual switch (e.g. keep a test stack warm:
# `scripts/stack.sh test up`, then `make test` reuses it and leaves it up).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 dev|test up|down|status|env"
load_profile "$1"
case $2 in
up) stack_up ;;
down)
	# A running `make test` holds a shared lock on the test stack (see
	# test.sh); never pull the stack from under it.
	exec 9>"$DATA_DIR/stack.lock"
	if flock -x -n 9; then
		stack_down
		rm -f "$PID_DIR/stop-after-tests"
	else
		warn "$1 stack is in use by a running make test; leaving it (that run stops it)"
	fi
	;;
status) stack_status ;;
env)
	[ -f "$ENV_FILE" ] || die "no $ENV_FILE; run '$0 $1 up' first"
	cat "$ENV_FILE"
	;;
*) die "unknown command '$2'" ;;
esac
