#!/usr/bin/env bash
# cluster.sh up|down|status|env|kill SVC|stop SVC|frontend-auth on|off|pg-stop|pg-start — Temporal's own server
# as a cluster (docs/operators.md#a-temporal-cluster-make-cluster): frontend,
# history, matching and worker as four `temporal-server` processes on
# PostgreSQL (persistence and SQL visibility), mTLS on the frontend and
# between the services from a CA generated here, plaintext refused; then
# the namespace and our search attributes, stripe-mock, cartwright's worker
# (codec server included), the MCP gateway and Temporal's Web UI.
#
#   up          start whatever is down (safe to repeat; `make cluster`)
#   down        stop everything this cluster started (`make cluster-down`)
#   status      what runs
#   env         print the environment file (`. .data/cluster/env`)
#   kill SVC    SIGKILL one service by its pid file (the fault tests)
#   stop SVC    stop one service gracefully (a rolling restart: stop, up)
#   frontend-auth on|off  restart the frontend with or without the
#               authorizer, the rest running (the bench's comparison)
#   pg-stop, pg-start  stop or start the private PostgreSQL (CLUSTER_PG=private)
#
# Knobs (the defaults are `make cluster`'s):
#   CLUSTER_DIR        state, pids, logs, certificates (.data/cluster)
#   CLUSTER_PORT_BASE  first of the ~23 ports it uses (7400; see cluster_ports)
#   CLUSTER_PG         shared: the project's PostgreSQL on :5432 (databases
#                      temporal_cluster*, cartwright_cluster); private: a
#                      PostgreSQL of its own in CLUSTER_DIR/pg on base+13,
#                      which the fault tests may restart without touching
#                      anyone else's databases
#   CLUSTER_UI         1 (default) starts the Web UI, 0 does not
#   CLUSTER_APPS       1 (default) starts stripe-mock and cartwright's
#                      processes, 0 Temporal alone (the bench's cluster)
#   CLUSTER_NO_BUILD   1: reuse the worker and starter binaries an earlier
#                      `up` built (the fault matrix's restarts)
#   CLUSTER_STRIPE_API_BASE  the worker's Stripe (default: the cluster's
#                      stripe-mock); the fault tests put their proxy there
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/cluster-lib.sh
. "$(dirname "$0")/cluster-lib.sh"

[ $# -ge 1 ] || die "usage: $0 up|down|status|env|kill SVC|stop SVC|frontend-auth on|off|pg-stop|pg-start"
load_cluster
case $1 in
up) cluster_up ;;
down) cluster_down ;;
status) cluster_status ;;
env)
	[ -f "$ENV_FILE" ] || die "no $ENV_FILE; run '$0 up' first"
	cat "$ENV_FILE"
	;;
kill)
	[ $# -eq 2 ] || die "usage: $0 kill frontend|history|matching|worker|cartwright-worker|mcp"
	cluster_kill "$2"
	;;
stop)
	[ $# -eq 2 ] || die "usage: $0 stop frontend|history|matching|worker|cartwright-worker|hydra"
	cluster_stop "$2"
	;;
frontend-auth)
	[ $# -eq 2 ] || die "usage: $0 frontend-auth on|off"
	cluster_frontend_auth "$2"
	;;
pg-stop) cluster_pg_stop ;;
pg-start) cluster_pg_start ;;
*) die "unknown command '$1'" ;;
esac
