{{/* Names and labels shared by every template. */}}
{{- define "tensorfleet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tensorfleet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tensorfleet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tensorfleet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "tensorfleet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tensorfleet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tensorfleet
{{- end -}}

{{/*
Helm's release-ownership annotations. Helm sets them itself on install; rendering them too lets
objects applied from `helm template` output (deploy/operator.yaml: release tensorfleet, namespace
tensorfleet-system) be adopted by `helm install` of that release, together with the
app.kubernetes.io/managed-by: Helm label above.
*/}}
{{- define "tensorfleet.ownership" -}}
meta.helm.sh/release-name: {{ .Release.Name }}
meta.helm.sh/release-namespace: {{ .Release.Namespace }}
{{- end -}}

{{- define "tensorfleet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tensorfleet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The gang scheduler's PodGroup API group (operator/tensorfleet_operator/api.py PODGROUP_API). */}}
{{- define "tensorfleet.podGroupAPIGroup" -}}
{{- if eq .Values.gangScheduler "volcano" -}}scheduling.volcano.sh{{- else -}}scheduling.x-k8s.io{{- end -}}
{{- end -}}

{{/*
The RBAC rules: exactly the requests the operator makes (operator/tensorfleet_operator/handlers.py
through kubeclient.py, and kopf's watches, events and peering). tests/deploy checks them against the
requests a real operator run sends.
*/}}
{{- define "tensorfleet.rules" -}}
# kopf watches TFJobs; the reconcile reads one, and deletes it when ttlSecondsAfterFinished expires.
- apiGroups: [{{ .Values.apiGroup | quote }}]
  resources: [tfjobs]
  verbs: [get, list, watch, delete]
# Status is written through the status subresource (merge patch) only.
- apiGroups: [{{ .Values.apiGroup | quote }}]
  resources: [tfjobs/status]
  verbs: [patch]
# Children: listed and watched by the job-name label selector, created and deleted by name.
- apiGroups: [""]
  resources: [pods, services]
  verbs: [list, watch, create, delete]
# The per-job RPC token; read back only when a create finds one (to check its owner).
# Deleted by the garbage collector through its ownerReference, never by the operator.
- apiGroups: [""]
  resources: [secrets]
  verbs: [create, get]
# Kubernetes Events on TFJobs (the operator's and kopf's, both through core v1).
- apiGroups: [""]
  resources: [events]
  verbs: [create]
{{- if .Values.gangScheduler }}
# Gang scheduling: one PodGroup per job, deleted when the job ends.
- apiGroups: [{{ include "tensorfleet.podGroupAPIGroup" . | quote }}]
  resources: [podgroups]
  verbs: [create, delete]
{{- end }}
{{- end -}}

{{/* kopf's peering objects: watched (list, watch), and patched with keep-alives and its daemon's finalizer. */}}
{{- define "tensorfleet.peeringRule" -}}
- apiGroups: [kopf.dev]
  resources: [{{ if .Values.watchNamespaces }}kopfpeerings{{ else }}clusterkopfpeerings{{ end }}]
  verbs: [list, watch, patch]
{{- end -}}
