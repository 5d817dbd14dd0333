#!/usr/bin/env bash
# mcp-ts.sh setup — install scripts/mcp-ts's pinned npm packages (the
# official TypeScript MCP SDK, package-lock.json) with npm ci, node and npm
# from Debian's packages if absent. gateway/tsclient_test.go runs
# scripts/mcp-ts/client.mjs against the gateway in the integration suite
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
		log "installing ${need[*]} from Debian's packages (the TypeScript MCP client test needs them)"
		as_root apt-get update -qq ||
			die "apt-get update failed (no network or no Debian mirror?): cannot install ${need[*]} for the TypeScript MCP client test"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
			die "apt-get install ${need[*]} failed: the TypeScript MCP client test cannot run"
	fi
	if [ ! -d scripts/mcp-ts/node_modules/@modelcontextprotocol/sdk ] ||
		[ scripts/mcp-ts/package-lock.json -nt scripts/mcp-ts/node_modules/.package-lock.json ]; then
		log "installing scripts/mcp-ts's npm packages (npm ci)"
		(cd scripts/mcp-ts && npm ci --no-audit --no-fund --loglevel=error) ||
			die "npm ci in scripts/mcp-ts failed (no network or no npm registry?): the TypeScript MCP client test cannot run"
	fi
}

case ${1:-} in
setup) setup ;;
*) die "usage: scripts/mcp-ts.sh setup" ;;
esac
