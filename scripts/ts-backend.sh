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

setup() {
	local need=()
	command -v node >/dev/null || need+=(nodejs)
	command -v npm >/dev/null || need+=(npm)
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]} from Debian's packages (the TypeScript backend test needs them)"
		as_root apt-get update -qq ||
			die "apt-get update failed (no network or no Debian mirror?): cannot install ${need[*]} for the TypeScript backend test"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
			die "apt-get install ${need[*]} failed: the TypeScript backend test cannot run"
	fi
	if [ ! -d scripts/ts-backend/node_modules/@temporalio/client ] ||
		[ scripts/ts-backend/package-lock.json -nt scripts/ts-backend/node_modules/.package-lock.json ]; then
		log "installing scripts/ts-backend's npm packages (npm ci)"
		(cd scripts/ts-backend && npm ci --no-audit --no-fund --loglevel=error) ||
			die "npm ci in scripts/ts-backend failed (no network or no npm registry?): the TypeScript backend test cannot run"
	fi
}

case ${1:-} in
setup) setup ;;
*) die "usage: scripts/ts-backend.sh setup" ;;
esac
