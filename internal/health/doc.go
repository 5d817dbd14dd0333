// Package health serves a worker process's Kubernetes probes from its real
// state: /livez fails once the Temporal worker stopped on a fatal error
// (the kubelet restarts the pod), /readyz passes only while the worker has
// started polling and PostgreSQL answers (a pod that cannot write evidence
// takes no webhook traffic and holds up a rolling update).
package health
