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

setup() {
	local need=()
	command -v node >/dev/null || need+=(nodejs)
	command -v npm >/dev/null || need+=(npm)
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]} from Debian's packages (the TypeScript Temporal client test needs them)"
		as_root apt-get update -qq ||
			die "apt-get update failed (no network or no Debian mirror?): cannot install ${need[*]} for the TypeScript Temporal client test"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
			die "apt-get install ${need[*]} failed: the TypeScript Temporal client test cannot run"
	fi
	if [ ! -d scripts/temporal-ts/node_modules/@temporalio/client ] ||
		[ scripts/temporal-ts/package-lock.json -nt scripts/temporal-ts/node_modules/.package-lock.json ]; then
		log "installing scripts/temporal-ts's npm packages (npm ci)"
		(cd scripts/temporal-ts && npm ci --no-audit --no-fund --loglevel=error) ||
			die "npm ci in scripts/temporal-ts failed (no network or no npm registry?): the TypeScript Temporal client test cannot run"
	fi
}

case ${1:-} in
setup) setup ;;
*) die "usage: scripts/temporal-ts.sh setup" ;;
esac
