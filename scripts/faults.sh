#!/usr/bin/env bash
# The fault matrix (docs/testing.md#fault-matrix-make-test-faults; make test-faults; make test runs FAULTS=short).
# It starts a stack of its own on free ports — Temporal dev server on a state
# file, a private PostgreSQL cluster, stripe-mock behind a fault-injecting
# proxy, two worker processes built from ./worker — never the dev or test
# stack, and prints one table. FAULTS=short (a few minutes) or long (the
# 60 s and 5 min PostgreSQL outages, 40 orders and 12 worker kills).
# Needs root (the private cluster runs as the postgres OS user).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

form=${FAULTS:-long}
case "$form" in
short) limit=20m ;;
long) limit=60m ;;
*) die "FAULTS=$form: want short or long" ;;
esac
ensure_tools
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go_build "$work/" ./worker
mkdir -p "$ROOT/.data"
export FAULTS="$form" CARTWRIGHT_TEMPORAL_BIN="$BIN/temporal" CARTWRIGHT_STRIPE_MOCK_BIN="$BIN/stripe-mock" \
	CARTWRIGHT_FAULTS_WORKER_BIN="$work/worker" FAULTS_TABLE="${FAULTS_TABLE:-$ROOT/.data/faults-$form.md}"
log "fault matrix ($form form); table in $FAULTS_TABLE"
cd "$ROOT"
go test -count=1 -timeout "$limit" -run '^TestFaultMatrix$' -v ./worker/faults/
