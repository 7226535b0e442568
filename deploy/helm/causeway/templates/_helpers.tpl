{{/* Chart name, shortened to the 63 characters Kubernetes names allow. */}}
{{- define "causeway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped base name of every object. */}}
{{- define "causeway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "causeway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "causeway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component (api, worker, migrate). */}}
{{- define "causeway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "causeway.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "causeway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "causeway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "causeway.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The Secret every pod reads its CAUSEWAY_* secrets from. */}}
{{- define "causeway.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "causeway.fullname" . }}
{{- end }}
{{- end }}

{{/*
Settings every process shares: the Temporal cluster, the non-secret options and
extraEnv. Secrets come from the Secret through envFrom.
*/}}
{{- define "causeway.env" -}}
- name: CAUSEWAY_TEMPORAL_ADDRESS
  value: {{ required "temporal.address (host:port of the Temporal frontend) is required" .Values.temporal.address | quote }}
- name: CAUSEWAY_TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: CAUSEWAY_TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: CAUSEWAY_LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: CAUSEWAY_PUBLIC_URL
  value: {{ .Values.config.publicUrl | quote }}
- name: CAUSEWAY_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.config.rateLimitPerMinute | quote }}
- name: CAUSEWAY_AUTH_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.config.authRateLimitPerMinute | quote }}
- name: CAUSEWAY_TRUSTED_PROXIES
  value: {{ .Values.config.trustedProxies | quote }}
- name: CAUSEWAY_AUTH_SIGNUP_ENABLED
  value: {{ .Values.config.signupEnabled | quote }}
- name: CAUSEWAY_QUOTA_EVENTS_PER_MONTH
  value: {{ .Values.config.quotaEventsPerMonth | quote }}
- name: CAUSEWAY_QUOTA_INVESTIGATIONS_PER_MONTH
  value: {{ .Values.config.quotaInvestigationsPerMonth | quote }}
- name: CAUSEWAY_LLM_BASE_URL
  value: {{ .Values.llm.baseUrl | quote }}
- name: CAUSEWAY_LLM_MODEL
  value: {{ .Values.llm.model | quote }}
# Nothing is written to disk with PostgreSQL configured; the data dir points at
# the writable scratch volume all the same.
- name: CAUSEWAY_DATA_DIR
  value: /tmp/causeway
{{- range $k, $v := .Values.extraEnv }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end }}

{{/* Pod-level settings shared by the api and worker Deployments and the Job. */}}
{{- define "causeway.podSpec" -}}
serviceAccountName: {{ include "causeway.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}
