#!/usr/bin/env bash
# temporal-ts.sh setup — install scripts/temporal-ts's pinned npm packages
# (Temporal's official TypeScript SDK, package-lock.json) with npm ci, node
# and npm from Debian's packages if absent. workflows/draftordertest/
# tsclient_test.go runs scripts/temporal-ts/client.mjs against the test
# stack in the integration suite and fails (never skips) when this setup
# has not run: `make test` and `make test-integration` run it first.
# Without network for apt or npm it fails, saying so.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

case ${1:-} in
setup) npm_setup scripts/temporal-ts @temporalio/client "the TypeScript Temporal client test" ;;
*) die "usage: scripts/temporal-ts.sh setup" ;;
esac
