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

case ${1:-} in
setup) npm_setup scripts/mcp-ts @modelcontextprotocol/sdk "the TypeScript MCP client test" ;;
*) die "usage: scripts/mcp-ts.sh setup" ;;
esac
