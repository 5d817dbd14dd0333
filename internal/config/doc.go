// Package config reads every setting of the worker, the CLI and the webhook
// receiver from the environment, with defaults that match `make dev`. It is
// the only place that reads the environment.
package config
