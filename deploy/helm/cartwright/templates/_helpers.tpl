{{/* Names and labels shared by every template. */}}

{{- define "cartwright.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cartwright.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "cartwright.labels" -}}
{{ include "cartwright.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "cartwright.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cartwright.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "cartwright.secretName" -}}
{{- default (printf "%s-secrets" (include "cartwright.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "cartwright.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* The build id of Worker Versioning: explicit, else the image's tag or digest. */}}
{{- define "cartwright.buildId" -}}
{{- $id := .Values.versioning.buildId | default .Values.image.digest | default .Values.image.tag | default .Chart.AppVersion -}}
{{- $id | replace "sha256:" "" | trunc 63 -}}
{{- end -}}

{{/* Environment every long-running cartwright container gets (worker and
     MCP gateway): Temporal, the task queue, and the secrets every one needs,
     the runtime role's DSN and the payload keys
     (docs/operators.md#keys-and-grants-per-process). What runs tools adds
     cartwright.toolsEnv; a worker group adds cartwright.workerEnv by its roles. */}}
{{- define "cartwright.env" -}}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- if .Values.temporal.tls.enabled }}
- name: TEMPORAL_TLS
  value: "true"
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: /etc/temporal-tls/tls.crt
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: /etc/temporal-tls/tls.key
{{- if .Values.temporal.tls.serverCA }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: /etc/temporal-tls/ca.crt
{{- end }}
{{- end }}
{{- if .Values.temporal.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ .Values.temporal.tls.serverName | quote }}
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.temporal.apiKey.existingSecret }}
      key: {{ .Values.temporal.apiKey.key }}
{{- end }}
- name: CARTWRIGHT_TASK_QUEUE
  value: {{ .Values.taskQueue | quote }}
- name: CARTWRIGHT_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: CARTWRIGHT_FX_FEED_URL
  value: {{ .Values.fxRates.feedURL | quote }}
- name: CARTWRIGHT_FX_MAX_AGE
  value: {{ .Values.fxRates.maxAge | quote }}
{{- range $k := list "CARTWRIGHT_PG_DSN" "CARTWRIGHT_PAYLOAD_KEYS" }}
- name: {{ $k }}
  valueFrom:
    secretKeyRef:
      name: {{ include "cartwright.secretName" $ }}
      key: {{ $k }}
{{- end }}
{{- /* Optional: the current payload key id (default: the ring's first). */}}
- name: CARTWRIGHT_PAYLOAD_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ include "cartwright.secretName" $ }}
      key: CARTWRIGHT_PAYLOAD_KEY_ID
      optional: true
{{- /* The row signers' public rings: no secret, for every process that
     checks rows (docs/evidence.md#row-signatures). */}}
- name: CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS
  value: {{ .Values.rowPublicKeys.worker | quote }}
- name: CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS
  value: {{ .Values.rowPublicKeys.gateway | quote }}
{{- end -}}

{{/* What running tools needs besides: the evidence key (snapshots' raw
     outputs, sealed addresses) and Stripe's key. The gateway's direct reads
     and the polling worker groups. */}}
{{- define "cartwright.toolsEnv" -}}
{{- range $k := list "CARTWRIGHT_EVIDENCE_KEY" "CARTWRIGHT_EVIDENCE_KEY_ID" "STRIPE_SECRET_KEY" }}
- name: {{ $k }}
  valueFrom:
    secretKeyRef:
      name: {{ include "cartwright.secretName" $ }}
      key: {{ $k }}
{{- end }}
{{- end -}}

{{/* The secrets a worker group holds by its roles, and no others
     (docs/operators.md#keys-and-grants-per-process; the worker builds only
     what its roles serve, wiring.BuildFor): workflows and activities run the
     tools (cartwright.toolsEnv, both seal rings, the worker's row-signing
     ring), webhook verifies Stripe's
     signature (the webhook secret), codec seals staff decisions (the
     decision seal ring, the dev secret). Takes (dict "root" $ "roles" LIST). */}}
{{- define "cartwright.workerEnv" -}}
{{- $tools := or (has "workflows" .roles) (has "activities" .roles) -}}
{{- $keys := list -}}
{{- $optional := list -}}
{{- if $tools }}
{{- include "cartwright.toolsEnv" .root }}
{{- $keys = append $keys "CARTWRIGHT_QUOTE_SEAL_KEYS" }}{{ $optional = append $optional "CARTWRIGHT_QUOTE_SEAL_KEY_ID" }}
{{- $keys = append $keys "CARTWRIGHT_WORKER_SIGNING_KEYS" }}{{ $optional = append $optional "CARTWRIGHT_WORKER_SIGNING_KEY_ID" }}
{{- end }}
{{- if or $tools (has "codec" .roles) }}{{ $keys = append $keys "CARTWRIGHT_SEAL_KEYS" }}{{ $optional = append $optional "CARTWRIGHT_SEAL_KEY_ID" }}{{ end -}}
{{- if has "webhook" .roles }}{{ $keys = append $keys "STRIPE_WEBHOOK_SECRET" }}{{ end -}}
{{- if has "codec" .roles }}{{ $optional = append $optional "CARTWRIGHT_CODEC_SECRET" }}{{ end -}}
{{- range $k := $keys }}
- name: {{ $k }}
  valueFrom:
    secretKeyRef:
      name: {{ include "cartwright.secretName" $.root }}
      key: {{ $k }}
{{- end }}
{{- range $k := $optional }}
- name: {{ $k }}
  valueFrom:
    secretKeyRef:
      name: {{ include "cartwright.secretName" $.root }}
      key: {{ $k }}
      optional: true
{{- end }}
{{- end -}}

{{- define "cartwright.tlsVolume" -}}
{{- if .Values.temporal.tls.enabled }}
- name: temporal-tls
  secret:
    secretName: {{ required "temporal.tls.existingSecret is required with temporal.tls.enabled" .Values.temporal.tls.existingSecret }}
{{- end }}
{{- end -}}

{{- define "cartwright.tlsMount" -}}
{{- if .Values.temporal.tls.enabled }}
- name: temporal-tls
  mountPath: /etc/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "cartwright.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "cartwright.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* A Deployment's name: per group, and per build when versioned (so a
     draining build's Deployment stays untouched while the next one rolls
     out beside it). Takes (dict "root" $ "group" NAME "build" ID). */}}
{{- define "cartwright.deploymentName" -}}
{{- $base := printf "%s-%s" (include "cartwright.fullname" .root) .group -}}
{{- if .root.Values.versioning.enabled -}}
{{- printf "%s-%s" $base (.build | lower | replace "_" "-" | replace "." "-" | trunc 12 | trimSuffix "-") -}}
{{- else -}}
{{- $base -}}
{{- end -}}
{{- end -}}

{{/* The builds to run: the current one, and with versioning the draining
     ones still serving workflows pinned to them. */}}
{{- define "cartwright.builds" -}}
{{- $builds := list (dict "id" (include "cartwright.buildId" .) "image" (include "cartwright.image" .) "current" true "replicas" 0) -}}
{{- if .Values.versioning.enabled -}}
{{- range .Values.versioning.drainingBuilds -}}
{{- $image := .image | default (printf "%s:%s" $.Values.image.repository .buildId) -}}
{{- $builds = append $builds (dict "id" .buildId "image" $image "current" false "replicas" (.replicas | default 1)) -}}
{{- end -}}
{{- end -}}
{{- toJson $builds -}}
{{- end -}}

{{/* The program's own client at the OpenID provider (temporal.oidc): its
     id and the path of its secret, mounted alone, and the CA of a provider
     whose certificate a private CA signed (caSecret's ca.crt,
     CARTWRIGHT_OIDC_CA_FILE). Called with
     (dict "root" $ "clientId" id). */}}
{{- define "cartwright.oidcEnv" -}}
{{- if .root.Values.temporal.oidc.tokenURL }}
- name: CARTWRIGHT_OIDC_TOKEN_URL
  value: {{ .root.Values.temporal.oidc.tokenURL | quote }}
- name: CARTWRIGHT_OIDC_CLIENT_ID
  value: {{ .clientId | quote }}
- name: CARTWRIGHT_OIDC_CLIENT_SECRET_FILE
  value: /etc/cartwright-oidc/client-secret
{{- if .root.Values.temporal.oidc.caSecret }}
- name: CARTWRIGHT_OIDC_CA_FILE
  value: /etc/cartwright-oidc-ca/ca.crt
{{- end }}
{{- end }}
{{- end -}}

{{- define "cartwright.oidcVolume" -}}
{{- if .root.Values.temporal.oidc.tokenURL }}
- name: oidc-client
  secret:
    secretName: {{ required "temporal.oidc.existingSecret is required with temporal.oidc.tokenURL" .root.Values.temporal.oidc.existingSecret }}
    items:
      - key: {{ .clientId }}
        path: client-secret
{{- if .root.Values.temporal.oidc.caSecret }}
- name: oidc-ca
  secret:
    secretName: {{ .root.Values.temporal.oidc.caSecret }}
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
{{- end }}
{{- end -}}

{{- define "cartwright.oidcMount" -}}
{{- if .root.Values.temporal.oidc.tokenURL }}
- name: oidc-client
  mountPath: /etc/cartwright-oidc
  readOnly: true
{{- if .root.Values.temporal.oidc.caSecret }}
- name: oidc-ca
  mountPath: /etc/cartwright-oidc-ca
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}
