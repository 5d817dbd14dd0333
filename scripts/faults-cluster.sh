#!/usr/bin/env bash
# The fault matrix on Temporal's real topology (make test-faults-cluster,
# docs/testing.md#fault-matrix-on-the-cluster-make-test-faults-cluster):
# worker/faults' TestFaultMatrixCluster brings up a cluster of its own with
# scripts/cluster.sh — .data/cluster-faults, ports 7450-7471, a private
# PostgreSQL in that folder (it is stopped mid-run: the project's shared
# PostgreSQL on :5432 is never touched) — kills and restarts its services
# while orders and onboardings run, prints one table and stops it again
# (CLUSTER_KEEP=1 leaves it up). FAULTS=short (default) or long.
# Needs root (the private PostgreSQL runs as the postgres OS user).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

form=${FAULTS:-short}
case "$form" in
short) limit=30m ;;
long) limit=60m ;;
*) die "FAULTS=$form: want short or long" ;;
esac
export FAULTS="$form" CARTWRIGHT_CLUSTER_SCRIPT="$ROOT/scripts/cluster.sh" \
	CLUSTER_DIR="${FAULTS_CLUSTER_DIR:-$ROOT/.data/cluster-faults}" CLUSTER_PORT_BASE="${FAULTS_CLUSTER_PORT_BASE:-7450}" \
	CLUSTER_PG=private FAULTS_TABLE="${FAULTS_TABLE:-$ROOT/.data/faults-cluster-$form.md}" \
	CLUSTER_AUTH="${CLUSTER_AUTH:-0}" # the matrix's clients use the client certificate alone (no provider)
log "fault matrix on a Temporal cluster ($form form, $CLUSTER_DIR, ports from $CLUSTER_PORT_BASE); table in $FAULTS_TABLE"
cd "$ROOT"
go test -count=1 -timeout "$limit" -run '^TestFaultMatrixCluster$' -v ./worker/faults/
