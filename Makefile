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
migrations-lock: ## Record the checksums of the migrations in migrations.sha256.
	cd $(SERVER)/migrations && sha256sum [0-9]*.sql > migrations.sha256

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
