#!/usr/bin/env bash
# ts-backend.sh setup — install scripts/ts-backend's pinned npm packages (Temporal's
# official TypeScript SDK, package-lock.json) with npm ci, node and npm
# from Debian's packages if absent. starter/tsbackend_test.go runs
# scripts/ts-backend/order.mjs against a draft order in the integration suite
# and fails (never skips) when this setup has not run: `make test` and
# `make test-integration` run it first. Without network for apt or npm it
# fails, saying so.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

case ${1:-} in
setup) npm_setup scripts/ts-backend @temporalio/client "the TypeScript backend test" ;;
*) die "usage: scripts/ts-backend.sh setup" ;;
esac
