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

# What the starter says while part of the cluster is down
# (docs/backend.md#outages): history, then matching, then the provider,
# stopped gracefully one at a time while a draft order waits, and started
# again; a program without the provider's CA; a client certificate of
# another CA. Each must name what is down instead
# of guessing a missing worker or reporting a broken pipe.
starter_says() {
	# shellcheck disable=SC1090 # generated file
	(. "$ENV_FILE" && "$@" "$BIN/starter" --timeout 10s draft-order status "$ORDER_ID" 2>&1)
}
outage_says() {
	local svc=$1 want=$2 out
	"$ROOT/scripts/cluster.sh" stop "$svc"
	out=$(starter_says) && die "the starter answered with $svc down: $out"
	CLUSTER_NO_BUILD=1 "$ROOT/scripts/cluster.sh" up >/dev/null
	grep -qF "$want" <<<"$out" || die "with $svc down the starter said: $out (want: $want)"
	log "with $svc down the starter says: $out"
}
# shellcheck disable=SC1090 # generated file
ORDER_ID=$(. "$ENV_FILE" && "$BIN/starter" sample | grep -o 'draft-order/u_sample/[a-z0-9-]*' | head -n1)
[ -n "$ORDER_ID" ] || die "starter sample printed no draft order id"
outage_says history "Temporal's history service does not answer"
outage_says matching "Temporal's matching service does not answer"
# The provider: a program that cannot fetch its own token says so, not
# that Temporal or its TLS is at fault.
if idp_on; then
	outage_says hydra "the OpenID provider does not answer"
	out=$(starter_says env -u CARTWRIGHT_OIDC_CA_FILE) && die "the starter answered without the provider's CA: $out"
	grep -qF "the provider's TLS certificate is not trusted" <<<"$out" || die "without the provider's CA the starter said: $out"
	log "without the provider's CA the starter says: $out"
fi
FOREIGN=$(mktemp -d)
trap 'rm -rf "$FOREIGN"' EXIT
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=another CA" \
	-keyout "$FOREIGN/ca.key" -out "$FOREIGN/ca.crt" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=cartwright-client" \
	-keyout "$FOREIGN/client.key" -out "$FOREIGN/client.csr" 2>/dev/null
openssl x509 -req -in "$FOREIGN/client.csr" -CA "$FOREIGN/ca.crt" -CAkey "$FOREIGN/ca.key" -CAcreateserial -days 1 \
	-out "$FOREIGN/client.crt" 2>/dev/null
out=$(starter_says env TEMPORAL_TLS_CLIENT_CERT_PATH="$FOREIGN/client.crt" TEMPORAL_TLS_CLIENT_KEY_PATH="$FOREIGN/client.key") &&
	die "the starter answered with a client certificate of another CA: $out"
grep -qF "does not accept our client certificate" <<<"$out" || die "with a client certificate of another CA the starter said: $out"
log "with a client certificate of another CA the starter says: $out"
