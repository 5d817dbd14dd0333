#!/usr/bin/env bash
# test-cluster.sh — what `make test-cluster` runs once `make cluster` is up
# (docs/operators.md#a-temporal-cluster-make-cluster): worker/clustertest
# against it, then the Worker Versioning rollout (worker/scaletest
# TestDeployBesideRunningBuild: build A drains its pinned runs while build B
# takes the new ones) on its frontend with its client certificate, its
# stripe-mock and the shared PostgreSQL for the test's database.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/cluster-lib.sh
. "$(dirname "$0")/cluster-lib.sh"
load_cluster
[ -f "$ENV_FILE" ] || die "no $ENV_FILE; run make cluster first"
cd "$ROOT"
export CARTWRIGHT_CLUSTER_ENV="$ENV_FILE"
# The browser test on the cluster (worker/clustertest TestStaffSignInAndDecideInTheBrowser):
# Debian's chromium and scripts/ui's packages, as make test-ui installs them.
if idp_on; then
	"$ROOT/scripts/test-ui.sh" setup
	export CARTWRIGHT_CLUSTER_UI_TEST=1
fi
go test -count=1 -v ./worker/clustertest/
# shellcheck disable=SC1090 # generated file
(
	. "$ENV_FILE"
	export CARTWRIGHT_INTEGRATION=1 CARTWRIGHT_TEST_TEMPORAL_ADDRESS="$TEMPORAL_ADDRESS" \
		CARTWRIGHT_TEST_STRIPE_API_BASE="$STRIPE_API_BASE" \
		CARTWRIGHT_TEST_PG_DSN="postgres://cartwright_admin:cartwright_admin@127.0.0.1:${CARTWRIGHT_PG_PORT:-5432}/postgres?sslmode=disable"
	# With the provider (docs/operators.md#who-may-do-what-on-the-cluster):
	# the rollout's workers are the worker's identity, its orders the backend's.
	if idp_on; then
		eval "$(idp_client_env cartwright-worker)"
		export CARTWRIGHT_TEST_STARTER_OIDC_CLIENT_ID=cartwright-backend \
			CARTWRIGHT_TEST_STARTER_OIDC_CLIENT_SECRET_FILE="$IDP_DIR/cartwright-backend.secret"
	fi
	go test -count=1 -v -run '^TestDeployBesideRunningBuild$' ./worker/scaletest/
)
