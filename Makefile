# bothy: every developer and CI command. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

SERVER := services/server
LOCAL  := $(CURDIR)/.local
BIN    := $(CURDIR)/bin
GO     ?= go
# Tests run in parallel packages; each package starts its own PostgreSQL.
TEST_FLAGS ?= -race -count=1 -timeout=20m

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-20s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: pg-install
pg-install: ## Install the pinned PostgreSQL 18 binaries into the cache (once).
	@tools/pg/install.sh >/dev/null

# The version `make build` stamps into internal/platform/buildinfo
# (`bothy version`): the nearest tag with the commits since, else the short
# revision, with -dirty for uncommitted changes; the revision (for builds
# the toolchain does not VCS-stamp); and the build time in UTC.
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION   ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_TIME ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := bothy/server/internal/platform/buildinfo
LDFLAGS    := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).revision=$(REVISION) -X $(BUILDINFO).buildTime=$(BUILD_TIME)

.PHONY: build
build: ## Build the bothy binary into bin/, stamped with VERSION and BUILD_TIME.
	@mkdir -p $(BIN)
	cd $(SERVER) && $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/bothy ./cmd/bothy

.PHONY: run
run: pg-install build ## Build, provision PostgreSQL 18, create secrets, migrate and serve role all on 127.0.0.1:8080.
	tools/dev/run.sh

.PHONY: demo
demo: pg-install build ## Show outgoing webhooks end to end: throwaway PostgreSQL, server and HTTPS receiver, every delivery verified; stops by itself.
	cd $(SERVER) && $(GO) build -trimpath -o $(BIN)/bothy-demo ./cmd/bothy-demo
	tools/demo/demo.sh

.PHONY: pg-stop
pg-stop: ## Stop the local PostgreSQL cluster of `make run` (its data stays; `tools/pg/cluster.sh where .local/pg` prints where).
	tools/pg/cluster.sh stop $(LOCAL)/pg

.PHONY: test
test: pg-install test-libraries ## Run every test with -race against real PostgreSQL 18, the receiver libraries' tests first.
	cd $(SERVER) && $(GO) test $(TEST_FLAGS) ./...

.PHONY: test-short
test-short: pg-install test-libraries ## Run the tests without -race (faster feedback); the libraries' tests as in make test.
	cd $(SERVER) && $(GO) test -count=1 ./...

# The receiver libraries (ADR 0071): the Go module is outside go.work and
# is tested as a receiver builds it, on its own go.mod (GOWORK=off); the
# JavaScript package runs with Node's test runner. Their tests against a
# real delivery of a running server are in the server module
# (test/receiverlibs), which make test runs above.
LIB_GO := libraries/go/webhookverify
LIB_JS := libraries/js/webhookverify

.PHONY: test-libraries
test-libraries: ## Run the tests of the receiver libraries (libraries/go/webhookverify with -race, libraries/js/webhookverify with node --test).
	cd $(LIB_GO) && GOWORK=off $(GO) test $(TEST_FLAGS) ./...
	cd $(LIB_JS) && node --test test/*.test.js

# Benchmarks: every Benchmark* of the server module, in the packages that
# have one. BENCH_TIME is go test's -benchtime: a fixed iteration count
# (100x) keeps one pass short; raise it (2000x) and BENCH_COUNT (6) to
# compare two states with benchstat (services/server/README.md,
# "Benchmarks").
BENCH_TIME  ?= 100x
BENCH_COUNT ?= 1
BENCH_PKGS   = $$(grep -rl --include='*_test.go' '^func Benchmark' . | xargs -n1 dirname | sort -u)

.PHONY: bench
bench: pg-install ## Run every benchmark of the server module once with a short -benchtime (BENCH_TIME, default 100x); see services/server/README.md.
	cd $(SERVER) && $(GO) test -run '^$$' -bench . -benchtime $(BENCH_TIME) -count $(BENCH_COUNT) $(BENCH_PKGS)

# The end-to-end benchmark (docs/benchmarks.md): a throwaway PostgreSQL 18,
# `bothy serve --role api` and `--role worker` processes, an HTTPS receiver
# and a load generator over the REST API; every scenario, under 10 minutes.
# Not part of make test. BENCH_E2E_SCALE=0.01 runs everything small;
# BENCH_E2E_FLAGS passes flags to bothy-bench (-scenarios fleet,hot).
BENCH_E2E_FLAGS ?=

.PHONY: bench-e2e
bench-e2e: pg-install build ## End-to-end webhook benchmark: real api and worker processes, HTTPS receiver, load over the REST API; prints every scenario (docs/benchmarks.md).
	cd $(SERVER) && $(GO) build -trimpath -o $(BIN)/bothy-bench ./cmd/bothy-bench
	tools/bench/e2e.sh $(BENCH_E2E_FLAGS)
# Fuzzing: every native Go fuzz target (func Fuzz*) of the server module,
# one after the other, each for FUZZ_TIME (go test's -fuzztime: a duration
# such as 30s, or a count such as 10000x). `make test` runs only their seed
# corpora; this target searches for new inputs. A failing input is written
# to the package's testdata/fuzz folder, where it becomes a seed.
FUZZ_TIME ?= 30s

.PHONY: fuzz
fuzz: pg-install ## Run every native Go fuzz target of the server module for FUZZ_TIME each (default 30s); make test runs their seeds only.
	cd $(SERVER) && for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for name in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go | sed 's/^func //' | sort -u); do \
			echo "fuzz $$dir $$name ($(FUZZ_TIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_TIME) $$dir || exit 1; \
		done; \
	done

.PHONY: bench-compare
bench-compare: ## Compare two saved `make bench` outputs with the pinned benchstat: make bench-compare OLD=a.txt NEW=b.txt.
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "usage: make bench-compare OLD=old.txt NEW=new.txt" >&2; exit 2; }
	old=$$(realpath "$(OLD)"); new=$$(realpath "$(NEW)"); cd tools/benchstat && GOWORK=off $(GO) tool benchstat "$$old" "$$new"

.PHONY: migrations-lock
migrations-lock: ## Record the checksums of new migrations in migrations.sha256 (merged lines never change).
	quality/migrations.sh lock


.PHONY: actions
actions: ## Regenerate docs/spec/actions.yaml and the generated tables of docs/spec/05-actions.md from the action catalogue.
	cd $(SERVER) && $(GO) run ./internal/authz/cmd/actionsgen -root $(CURDIR)

.PHONY: actions-check
actions-check: ## Fail when docs/spec/actions.yaml or 05-actions.md differ from the action catalogue (also part of make test).
	cd $(SERVER) && $(GO) test -count=1 -run TestGeneratedFilesAreCurrent ./internal/authz/cmd/actionsgen

CONFIG_DOC := docs/operations/configuration.md

.PHONY: config-reference
config-reference: ## Regenerate section 4 of docs/operations/configuration.md from the key registry.
	cd $(SERVER) && $(GO) run ./cmd/bothy config reference --write $(CURDIR)/$(CONFIG_DOC)

.PHONY: config-doc-check
config-doc-check: ## Fail when docs/operations/configuration.md section 4 differs from the key registry.
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; cp $(CONFIG_DOC) "$$tmp"; \
	(cd $(SERVER) && $(GO) run ./cmd/bothy config reference --write "$$tmp"); \
	diff -u $(CONFIG_DOC) "$$tmp" || { echo "$(CONFIG_DOC) is out of date: run make config-reference" >&2; exit 1; }

# ---- HTTP contract and generated code ------------------------------------
# The generators live in the tools module (not in go.work); they run with
# GOWORK=off from tools/ and get absolute paths.
TOOLS_RUN := cd tools && GOWORK=off $(GO) run
API_SPEC  := $(CURDIR)/api/openapi.yaml
API_PKG   := $(CURDIR)/$(SERVER)/api
ROUTEGEN  := $(TOOLS_RUN) ./routegen -spec $(API_SPEC) -operations $(API_PKG)/operations.yaml -config $(API_PKG)/codegen.yaml
ROUTEGEN_FILES := openapi.gen.yaml api.gen.go operations.gen.go
APITABLES := $(TOOLS_RUN) ./apitables -spec $(API_SPEC) -errors-doc $(CURDIR)/docs/spec/06-api.md -webhooks-doc $(CURDIR)/docs/api/webhooks.md
REDOCLY   := npx --yes @redocly/cli@2.77.0
# Packages whose TestRegisterCheck* tests make up make register-check: the
# generated table (api) and the real server the role assembly composes
# (internal/wire, which starts a throwaway PostgreSQL like every test binary
# of its package).
REGISTER_CHECK_PKGS ?= ./api/... ./internal/wire/...

# sqlc is pinned in its own tools module and built without cgo (its WASM
# parser), once, into Go's build cache.
SQLC = $$(cd $(CURDIR)/tools/sqlc && CGO_ENABLED=0 GOWORK=off $(GO) tool -n sqlc)
# The generated package of every module, read from sqlc.yaml (one entry a
# module, ADR 0078): internal/<module>/adapters/postgres/db beside the
# queries in internal/<module>/adapters/postgres/queries.
SQLC_OUT = $(shell sed -n 's/^ *out: *//p' $(SERVER)/sqlc.yaml)

.PHONY: codegen
codegen: codegen-routes codegen-sqlc ## Regenerate every generated file from its sources.

.PHONY: codegen-sqlc
codegen-sqlc: ## Regenerate the sqlc query code of every module from its queries and the migrations.
	cd $(SERVER) && rm -f $(addsuffix /*.gen.go,$(SQLC_OUT)) && $(SQLC) generate

# sqlc diff compares what it generates with the files; a file left over from
# a removed query file is caught by the loop.
.PHONY: codegen-check-sqlc
codegen-check-sqlc: ## Fail when the sqlc output of a module differs from its queries and the migrations.
	cd $(SERVER) && $(SQLC) diff || { echo "codegen-check: sqlc output is stale: run make codegen" >&2; exit 1; }
	cd $(SERVER) && for d in $(SQLC_OUT); do \
	  for f in "$$d"/*.sql.gen.go; do \
	    q="$$(dirname "$$d")/queries/$$(basename "$$f" .gen.go)"; \
	    [ ! -e "$$f" ] || [ -f "$$q" ] || { echo "codegen-check: $(SERVER)/$$f has no query file $$q: run make codegen" >&2; exit 1; }; \
	  done; \
	done

.PHONY: codegen-routes
codegen-routes: ## Regenerate services/server/api from api/openapi.yaml and operations.yaml.
	$(ROUTEGEN) -out $(API_PKG)

.PHONY: codegen-check
codegen-check: codegen-check-routes codegen-check-tables codegen-check-sqlc ## Fail when a generated file differs from what its sources give.

.PHONY: codegen-check-routes
codegen-check-routes: ## Regenerate the routes into a temporary folder and diff.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(ROUTEGEN) -out "$$tmp"; \
	for f in $(ROUTEGEN_FILES); do \
	  diff -u "$(API_PKG)/$$f" "$$tmp/$$f" || { echo "codegen-check: $(SERVER)/api/$$f is stale: run make codegen" >&2; exit 1; }; \
	done

.PHONY: codegen-check-tables
codegen-check-tables: ## Fail when the generated doc tables differ from api/openapi.yaml.
	$(APITABLES) -check

.PHONY: register-check
register-check: ## Route registration check (AZ-P1): operations, actions and handlers agree.
	cd $(SERVER) && $(GO) test -count=1 -run '^TestRegisterCheck' $(REGISTER_CHECK_PKGS)

.PHONY: api-lint
api-lint: ## Lint api/openapi.yaml with the pinned Redocly CLI (quality/redocly.yaml).
	$(REDOCLY) lint --config quality/redocly.yaml api/openapi.yaml

.PHONY: api-checks
api-checks: ## Check the contract's own conventions (tools/apicheck).
	$(TOOLS_RUN) ./apicheck -spec $(API_SPEC)

.PHONY: api-tables
api-tables: ## Write the generated tables into docs/spec/06-api.md and docs/api/webhooks.md.
	$(APITABLES)


# Quality gates. Each gate's script is in quality/ (tools/docs for the site),
# and quality/selftest/ proves each one fails on a planted defect.

.PHONY: lint
lint: ## Lint Go (golangci-lint, quality/golangci.yml: the server, tools and the Go receiver library) and all files (no en/em dash, white label).
	quality/lint.sh

.PHONY: gitleaks
gitleaks: ## Scan the git history of HEAD and the work tree for secrets (.gitleaks.toml).
	quality/gitleaks.sh

.PHONY: licenses
licenses: ## Check the license of every Go dependency against quality/licenses/allowed.txt.
	quality/licenses.sh

.PHONY: adr-index
adr-index: ## Regenerate docs/adr/README.md from the ADR files.
	quality/adr-index.sh write

.PHONY: adr-index-check
adr-index-check: ## Fail when docs/adr/README.md is stale or an ADR lacks status or date.
	quality/adr-index.sh check

.PHONY: migrations-lint
migrations-lint: ## Lint the migrations: names, goose sections, grants, retention comments, checksums.
	quality/migrations.sh lint

.PHONY: arch
arch: ## Enforce the module dependency rules of services/server/architecture/modules.yaml.
	quality/arch.sh

.PHONY: docs
docs: ## Build the documentation site into site/ offline; broken links fail.
	tools/docs/build.sh

.PHONY: quality-selftest
quality-selftest: ## Unit-test tools/ and prove every gate fails on a planted defect.
	quality/selftest/run.sh

.PHONY: check
check: adr-index-check migrations-lint arch codegen-check register-check api-lint api-checks config-doc-check lint gitleaks licenses docs quality-selftest test ## Run every gate and the tests (CI).
	@echo "make check: all gates and tests passed"
