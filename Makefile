# cartwright — local stack, tests, lint. See docs/operators.md#local-stack and docs/testing.md.
# The logic lives in scripts/*.sh; this file only names the entry points.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
# Steps of `make test` must run in order even under `make -j`.
.NOTPARALLEL:
.DEFAULT_GOAL := help

BIN := .bin
# Tool binaries pinned in build/tools/go.mod, built once into .bin/ (rebuilt when
# build/tools/go.mod or build/tools/go.sum change). Exec'ing them directly is much faster
# than `go tool`, which re-links the 250 MB temporal CLI on every call.
# helm, kubeconform and k8sschema (build/tools/k8sschema: kubeconform's
# Kubernetes schemas, offline) validate deploy/helm in `make lint`.
TOOLS := temporal stripe-mock staticcheck workflowcheck helm kubeconform k8sschema
TOOL_PKGS := github.com/temporalio/cli/cmd/temporal \
	github.com/stripe/stripe-mock \
	honnef.co/go/tools/cmd/staticcheck \
	go.temporal.io/sdk/contrib/tools/workflowcheck \
	helm.sh/helm/v3/cmd/helm \
	github.com/yannh/kubeconform/cmd/kubeconform \
	./k8sschema

# The starter sub-command `make dev` runs last. Skipped (with a note) while
# ./starter has no such command; `make dev DEV_MAIN_JOB=` skips it always.
DEV_MAIN_JOB ?= sample
# Fuzz targets `make test` runs briefly, as pkg:FuzzName (space-separated).
FUZZ_TARGETS ?= ./gateway/wire:FuzzDecodeInbound ./toolkit:FuzzDecodeToolCall ./toolkit:FuzzCanonicalTree ./toolkit:FuzzCanonicalRaw ./commerce/rules/address:FuzzValidate ./commerce/rules/tax:FuzzEstimate
FUZZ_TIME ?= 100000x
# Timeout of the integration `go test` run; packages and extra flags for both
# runs (e.g. TEST_PKGS=./workflows/... GOTEST_FLAGS='-race -run TestDraft').
TEST_TIMEOUT ?= 20m
TEST_PKGS ?= ./...
GOTEST_FLAGS ?=
export DEV_MAIN_JOB FUZZ_TARGETS FUZZ_TIME TEST_TIMEOUT TEST_PKGS GOTEST_FLAGS

.PHONY: help tools build dev down status test test-stress test-unit test-integration test-integration-ui test-ui test-scale test-faults test-faults-short test-down fuzz lint clean bench cluster-tools cluster cluster-down cluster-status test-cluster test-faults-cluster

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

TOOL_BINS := $(addprefix $(BIN)/,$(TOOLS))

tools: $(TOOL_BINS) ## build the pinned tool binaries into .bin/

# One go build for all four (grouped target: shared packages compile once);
# touch because go build leaves an up-to-date binary's mtime alone.
$(TOOL_BINS) &: build/tools/go.mod build/tools/go.sum build/tools/k8sschema/main.go
	@echo "==> building tools into $(BIN)/ (first time takes a few minutes)"
	@mkdir -p $(BIN)
	cd build/tools && go build -o ../../$(BIN)/ $(TOOL_PKGS)
	@touch $(TOOL_BINS)

# Commit hash linked into the binaries: evidence records it as the code version.
BUILD_HASH ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
LDFLAGS := -X github.com/cartwright-dev/cartwright/toolkit.build=$(BUILD_HASH)

# Temporal's own server (go.temporal.io/server: temporal-server and
# temporal-sql-tool, the version the pinned CLI embeds) and its Web UI
# server (github.com/temporalio/ui-server), pinned in build/tools/go.mod
# too, for `make cluster` only: `make tools` stays as light as it was.
# Three builds (two of the packages are named main "server"); most of the
# server's packages are the CLI's, already in the build cache.
# temporal-server is Temporal's server with cartwright's claim mapper and
# authorizer linked in (build/tools/temporalserver, docs/operators.md#who-may-do-what-on-the-cluster).
CLUSTER_TOOL_BINS := $(BIN)/temporal-server $(BIN)/temporal-sql-tool $(BIN)/temporal-ui-server
# The cluster's OpenID Connect provider: Ory Hydra from its Go module and
# the login and consent app, in a module of their own (build/hydra: Hydra's
# dependencies never meet Temporal's).
IDP_BINS := $(BIN)/hydra $(BIN)/cartwright-idp-login
cluster-tools: $(CLUSTER_TOOL_BINS) $(IDP_BINS) ## build Temporal's server, sql tool, Web UI server and the OpenID provider into .bin/

$(CLUSTER_TOOL_BINS) &: build/tools/go.mod build/tools/go.sum $(wildcard build/tools/temporalserver/*.go build/tools/temporalserver/*/*.go)
	@echo "==> building Temporal's server, sql tool and Web UI server into $(BIN)/"
	@mkdir -p $(BIN)
	cd build/tools && go build -o ../../$(BIN)/temporal-server ./temporalserver
	cd build/tools && go build -o ../../$(BIN)/temporal-sql-tool go.temporal.io/server/cmd/tools/sql
	cd build/tools && go build -o ../../$(BIN)/temporal-ui-server github.com/temporalio/ui-server/v2/cmd/server
	@touch $(CLUSTER_TOOL_BINS)

$(IDP_BINS) &: build/hydra/go.mod build/hydra/go.sum $(wildcard build/hydra/loginapp/*.go)
	@echo "==> building Ory Hydra and the login app into $(BIN)/ (Hydra's first build takes minutes)"
	@mkdir -p $(BIN)
	cd build/hydra && go build -o ../../$(BIN)/hydra github.com/ory/hydra/v2
	cd build/hydra && go build -o ../../$(BIN)/cartwright-idp-login ./loginapp
	@touch $(IDP_BINS)

# Temporal's real topology (docs/operators.md#a-temporal-cluster-make-cluster): four
# temporal-server processes on PostgreSQL with mTLS, our worker, gateway and
# the Web UI against it. Safe to repeat: starts only what is down.
cluster: tools cluster-tools ## Temporal's frontend/history/matching/worker on PostgreSQL + mTLS, our services on it
	scripts/cluster.sh up

# Checks a running make cluster (brought up first): four processes on
# PostgreSQL, plaintext and foreign certificates refused, a draft order
# through it, the Web UI against it (worker/clustertest); then a Worker
# Versioning rollout on it (worker/scaletest TestDeployBesideRunningBuild).
test-cluster: cluster ## make cluster, then worker/clustertest and the Worker Versioning rollout against it
	scripts/test-cluster.sh

cluster-down: ## stop everything make cluster started
	scripts/cluster.sh down

cluster-status: ## show what make cluster runs
	scripts/cluster.sh status

# The fault matrix on a cluster of its own (.data/cluster-faults, ports
# 7450-7471, a private PostgreSQL it restarts): SIGKILL of each service and
# of our worker, a rolling restart, a PostgreSQL restart
# (docs/testing.md#fault-matrix-on-the-cluster-make-test-faults-cluster).
test-faults-cluster: tools cluster-tools ## the fault matrix against make cluster's topology (own cluster, own PostgreSQL)
	scripts/faults-cluster.sh

build: ## build worker and starter into .bin/
	go build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./worker ./starter

dev: ## start the local stack, the worker, and run the main job (safe to repeat)
	scripts/dev.sh

down: ## stop exactly what make dev started
	scripts/stack.sh dev down

test-down: ## stop a test stack kept up with scripts/stack.sh test up
	scripts/stack.sh test down

status: ## show what is running
	scripts/stack.sh dev status

test: test-unit fuzz test-integration-ui test-faults-short ## unit tests, short fuzzing, integration tests and the browser test, the short fault matrix

# The integration run's go test -timeout stretches with the deadlines (60m)
# unless TEST_TIMEOUT is given on the command line or in the environment.
test-stress: ## make test while stress-ng keeps 2 CPUs busy (deadlines x3; STRESS_CPUS, CARTWRIGHT_TEST_TIME_SCALE)
	TEST_TIMEOUT=$(if $(filter file,$(origin TEST_TIMEOUT)),60m,$(TEST_TIMEOUT)) scripts/test-stress.sh

test-unit: ## go test -short ./... (no services)
	scripts/test.sh unit

test-integration: tools ## start the test stack if needed, go test ./..., stop it
	scripts/mcp-ts.sh setup
	scripts/temporal-ts.sh setup
	scripts/ts-backend.sh setup
	scripts/test.sh integration

test-ui: tools ## headless Chromium through the Web UI: codec server, support staff (installs chromium, npm ci in scripts/ui)
	scripts/test-ui.sh

# What `make test` runs: the integration suite, then the browser test on the
# same test stack (its chromium and npm setup first, so a machine without
# network fails at once, saying why).
test-integration-ui: tools
	scripts/test-ui.sh setup
	scripts/mcp-ts.sh setup
	scripts/temporal-ts.sh setup
	scripts/ts-backend.sh setup
	WITH_UI_TEST=1 scripts/test.sh integration

test-faults: tools ## the fault matrix on a stack of its own (FAULTS=long|short, default long)
	scripts/faults.sh

test-faults-short: tools ## the fault matrix's short form (what make test runs)
	FAULTS=short scripts/faults.sh

# The many-workers kill test at load (make test runs it short: 24 orders,
# 4 onboardings). Override e.g. SCALE_ORDERS=1000 SCALE_CONCURRENCY=48.
SCALE_ORDERS ?= 240
SCALE_ONBOARDINGS ?= 20
SCALE_CONCURRENCY ?= 24
test-scale: tools ## three worker processes at load, two SIGKILLed (worker/scaletest)
	CARTWRIGHT_SCALE_ORDERS=$(SCALE_ORDERS) CARTWRIGHT_SCALE_ONBOARDINGS=$(SCALE_ONBOARDINGS) \
	  CARTWRIGHT_SCALE_CONCURRENCY=$(SCALE_CONCURRENCY) TEST_PKGS=./worker/scaletest/ \
	  GOTEST_FLAGS='-v -run TestManyWorkers' scripts/test.sh integration

# The draft order beside the Temporal floor (docs/performance.md#measuring-against-the-floor-make-bench): a dev
# server of its own on BENCH_PORT; the floor is worker/scaletest/floor, built from this repository.
# Override e.g. BENCH_ROUNDS=3 BENCH_N16=400 BENCH_KILL=0.
BENCH_ROUNDS ?= 2
BENCH_N1 ?= 40
BENCH_N16 ?= 200
BENCH_KILL ?= 1
# More in-flight levels past 16, e.g. BENCH_MORE=32,64 (where the server saturates).
BENCH_MORE ?=
# BENCH_TARGET=cluster: on Temporal's four services, a private PostgreSQL and
# mTLS (a cluster of its own, .data/cluster-bench, ports 7425-7449), CPU per service;
# then authorization off against on, BENCH_AUTH_ROUNDS rounds of BENCH_AUTH_N
# orders at 16 in flight per side, and their ratio
# (docs/performance.md#authorization-on-the-cluster). BENCH_PARTS=auth: only that.
BENCH_TARGET ?= dev
BENCH_AUTH_ROUNDS ?= 3
BENCH_AUTH_N ?= 200
bench: tools $(if $(filter cluster,$(BENCH_TARGET)),cluster-tools) ## draft orders vs the Temporal floor at 1 and 16 in flight, one table; audits; worker SIGKILLed (BENCH_TARGET=dev|cluster)
	CARTWRIGHT_BENCH_ROUNDS=$(BENCH_ROUNDS) CARTWRIGHT_BENCH_N1=$(BENCH_N1) CARTWRIGHT_BENCH_N16=$(BENCH_N16) \
	  CARTWRIGHT_BENCH_KILL=$(BENCH_KILL) CARTWRIGHT_BENCH_MORE=$(BENCH_MORE) BENCH_TARGET=$(BENCH_TARGET) \
	  BENCH_AUTH_ROUNDS=$(BENCH_AUTH_ROUNDS) BENCH_AUTH_N=$(BENCH_AUTH_N) scripts/test.sh bench

fuzz: ## run each FUZZ_TARGETS target for FUZZ_TIME
	scripts/test.sh fuzz

lint: tools ## gofmt, go vet, staticcheck, workflowcheck, the Helm chart (helm lint, kubeconform)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	$(BIN)/staticcheck ./...
	$(BIN)/workflowcheck ./...
	scripts/lint-deploy.sh

clean: down test-down cluster-down ## stop everything and delete .data/ and .bin/
	rm -rf .data $(BIN)
