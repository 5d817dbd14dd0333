#!/usr/bin/env bash
# cluster.sh up|down|status|env|kill SVC|pg-restart — Temporal's own server
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
#   pg-restart  restart the cluster's private PostgreSQL (CLUSTER_PG=private)
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
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/cluster-lib.sh
. "$(dirname "$0")/cluster-lib.sh"

[ $# -ge 1 ] || die "usage: $0 up|down|status|env|kill SVC|pg-restart"
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
pg-restart) cluster_pg_restart ;;
*) die "unknown command '$1'" ;;
esac
