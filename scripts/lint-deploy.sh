#!/usr/bin/env bash
# lint-deploy.sh — validate the Helm chart in deploy/helm/cartwright offline:
# `helm lint --strict` and `helm template` for every values file beside the
# chart (values-*.yaml, the documented topologies) and under ci/ (lint
# cases), then kubeconform -strict on each rendering.
#
# kubeconform's schemas: never downloaded at lint time. k8sschema (build/tools)
# writes them from the OpenAPI spec inside the Go module k8s.io/kubernetes at
# K8S_VERSION (fetched once by `go mod download` through the Go module proxy,
# checked against go's checksum database, cached in the module cache) into
# .bin/k8s-schemas/K8S_VERSION, in kubeconform's strict layout: an unknown
# field or a wrong type fails.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

K8S_VERSION=${K8S_VERSION:-v1.33.4}
CHART=deploy/helm/cartwright
SCHEMAS="$BIN/k8s-schemas/$K8S_VERSION"

if [ ! -s "$SCHEMAS/_definitions.json" ]; then
	log "writing Kubernetes $K8S_VERSION schemas into $SCHEMAS"
	"$BIN/k8sschema" -version "$K8S_VERSION" -out "$SCHEMAS"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=0
for values in "$CHART"/values-*.yaml "$CHART"/ci/*.yaml; do
	name=$(basename "$values" .yaml)
	log "helm lint + template + kubeconform: $values"
	"$BIN/helm" lint --strict --quiet --kube-version "${K8S_VERSION#v}" -f "$values" "$CHART" >/dev/null
	"$BIN/helm" template cartwright "$CHART" --kube-version "${K8S_VERSION#v}" -f "$values" >"$out/$name.yaml"
	kinds=$(grep -c '^kind:' "$out/$name.yaml" || true)
	[ "$kinds" -gt 0 ] || die "$values renders no resources"
	"$BIN/kubeconform" -strict -summary \
		-schema-location "$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
		"$out/$name.yaml"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || die "no values files under $CHART"
log "$n renderings of $CHART valid against Kubernetes $K8S_VERSION"
