#!/usr/bin/env bash
# test-ui.sh — what `make test-ui` runs: the headless-Chromium test of the
# Web UI with the codec server (audit/webui_test.go drives
# scripts/ui/codec-ui.mjs). It installs Debian's chromium if absent (never
# a browser download: puppeteer-core only drives /usr/bin/chromium), the
# pinned npm packages of scripts/ui (package-lock.json), then runs the test
# against the test stack like `make test-integration`. Screenshots land in
# docs/ui/.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

if ! command -v chromium >/dev/null; then
	log "installing chromium from Debian's packages"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
command -v node >/dev/null || die "node is not installed (apt-get install nodejs npm)"
if [ ! -d scripts/ui/node_modules/puppeteer-core ] ||
	[ scripts/ui/package-lock.json -nt scripts/ui/node_modules/.package-lock.json ]; then
	log "installing scripts/ui's npm packages (npm ci)"
	(cd scripts/ui && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p docs/ui
export CARTWRIGHT_UI_TEST=1 CHROMIUM=${CHROMIUM:-$(command -v chromium)}
TEST_PKGS=./audit/ GOTEST_FLAGS="-run ^TestWebUIWithCodecServer\$ -v ${GOTEST_FLAGS-}" \
	exec "$ROOT/scripts/test.sh" integration
