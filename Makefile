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

.PHONY: build
build: ## Build the bothy binary into bin/.
	@mkdir -p $(BIN)
	cd $(SERVER) && $(GO) build -trimpath -o $(BIN)/bothy ./cmd/bothy

.PHONY: test
test: pg-install ## Run every test with -race against real PostgreSQL 18.
	cd $(SERVER) && $(GO) test $(TEST_FLAGS) ./...

.PHONY: test-short
test-short: pg-install ## Run the tests without -race (faster feedback).
	cd $(SERVER) && $(GO) test -count=1 ./...

.PHONY: migrations-lock
migrations-lock: ## Record the checksums of new migrations in migrations.sha256 (merged lines never change).
	quality/migrations.sh lock

# Quality gates. Each gate's script is in quality/ (tools/docs for the site),
# and quality/selftest/ proves each one fails on a planted defect.

.PHONY: lint
lint: ## Lint Go (golangci-lint, quality/golangci.yml) and all files (no en/em dash, white label).
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
check: adr-index-check migrations-lint arch lint gitleaks licenses docs quality-selftest test ## Run every gate and the tests (CI).
	@echo "make check: all gates and tests passed"
