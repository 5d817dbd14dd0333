#!/usr/bin/env bash
# test-ui.sh [setup|run] — the headless-Chromium test of the Web UI
# (audit/webui_test.go drives scripts/ui/codec-ui.mjs): the codec server
# (docs/support.md#decoded-payloads-in-the-web-ui) and the support-staff path
# (docs/support.md#deciding-an-approval-in-the-web-ui).
#   setup  install Debian's chromium (never a browser download:
#          puppeteer-core only drives /usr/bin/chromium), node and npm if
#          absent, and scripts/ui's pinned npm packages (package-lock.json).
#          Without network for apt or npm it fails, saying so: the test
#          is part of `make test` and must never be skipped silently.
#   run    the test itself, against a test stack already up with its
#          environment loaded (what `make test` does after the integration
#          suite, on the same stack: scripts/test.sh integration with
#          WITH_UI_TEST=1).
#   (none) setup, then the test on the test stack like `make
#          test-integration` (what `make test-ui` runs); it refreshes the
#          screenshots committed in docs/ui/ (`run` writes them to
#          .data/test/ui/, so `make test` leaves the checkout clean).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

setup() {
	npm_setup scripts/ui puppeteer-core "the browser test (make test-ui, part of make test)" chromium
}

run() {
	[ -n "${CARTWRIGHT_INTEGRATION-}" ] || die "test-ui.sh run needs the test stack's environment (scripts/test.sh integration loads it)"
	# Screenshots of a `make test` run go under .data (the committed ones
	# in docs/ui are refreshed by `make test-ui`).
	export CARTWRIGHT_UI_SHOTS=${CARTWRIGHT_UI_SHOTS:-$ROOT/.data/test/ui}
	mkdir -p "$CARTWRIGHT_UI_SHOTS"
	log "browser test: headless chromium through the Web UI (codec server, support staff)"
	# shellcheck disable=SC2086
	CARTWRIGHT_UI_TEST=1 CHROMIUM=${CHROMIUM:-$(command -v chromium)} \
		go test -count=1 -timeout 10m -run '^TestWebUIWithCodecServer$' -v ${GOTEST_FLAGS-} ./audit/
}

case ${1:-} in
setup) setup ;;
run) run ;;
"")
	setup
	mkdir -p docs/ui
	TEST_PKGS=./audit/ GOTEST_FLAGS="-run ^TestWebUIWithCodecServer\$ -v ${GOTEST_FLAGS-}" CARTWRIGHT_UI_TEST=1 \
		CHROMIUM=${CHROMIUM:-$(command -v chromium)} exec "$ROOT/scripts/test.sh" integration
	;;
*) die "usage: $0 [setup|run]" ;;
esac
