# The two commands of the README: `make run` (demo on a local regtest node)
# and `make test` (the whole suite). Both install what is missing first.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT   ?= $(shell git rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X main.version=$(VERSION) -X main.gitCommit=$(COMMIT) -X main.buildTime=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)
FUZZEXECS ?= 20000x
GOLANGCI_LINT_VERSION ?= v2.15.0

.PHONY: all deps deps-build deps-system deps-js build run run-eth test lint test-go test-fuzz test-wire screenshots fuzz bench torture deb test-deb clean

all: build

## deps: system and npm packages the build and tests need
deps: deps-system deps-js

# deps-build: only what the binary and the demos need (no browser, no npm)
deps-build:
	@scripts/install-deps.sh build

deps-system:
	@scripts/install-deps.sh test

deps-js:
	@cd tools/js && npm ci --no-audit --no-fund --loglevel=error

## build: the blockbook binary in bin/
build: deps-build
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/blockbook .

## run: btcd regtest + demo chain + blockbook on http://127.0.0.1:9130;
## COIN=litecoin: litecoind regtest + MWEB chain + blockbook on http://127.0.0.1:19184;
## COIN=ethereum: the same as run-eth
COIN ?= bitcoin
DEMO_CMD = $(or $(if $(filter litecoin,$(COIN)),demoltc),$(if $(filter ethereum,$(COIN)),demoeth),$(if $(filter bitcoin,$(COIN)),demo),$(error COIN=$(COIN): the demos are bitcoin, litecoin and ethereum))
run: build
	$(GO) run ./cmd/$(DEMO_CMD) -blockbook bin/blockbook

## run-eth: in-process geth dev chain + token scenario + blockbook on http://127.0.0.1:9136
run-eth: build
	$(GO) run ./cmd/demoeth -blockbook bin/blockbook

## test: lint, vet, the whole suite once with -race (the import rules and
## size limits of internal/archtest included), every fuzz target briefly, and
## the golden answers type-checked against the wallet client's typings
test: deps lint test-go test-fuzz test-wire

## lint: golangci-lint with .golangci.yml (its pinned version, installed if missing)
lint:
	@scripts/lint.sh $(GOLANGCI_LINT_VERSION)

# The e2e package alone takes 21-24 min with -race on 2 cores; 45m leaves
# it room on a loaded runner (the CI job's limit is 90 min). One
# invocation, so that e2e overlaps the other packages.
test-go:
	$(GO) vet ./...
	BLOCKBOOK_ARTIFACTS=$(CURDIR)/artifacts $(GO) test -race -timeout 45m ./...

test-fuzz:
	@scripts/fuzz.sh $(FUZZEXECS)

test-wire:
	cd tools/js && node check-goldens.mjs ../../e2e/testdata

## screenshots: rewrite the explorer's reference screenshots (e2e/testdata/screenshots)
## after a meant change of its looks; review the changed images by eye before committing
screenshots: deps-system
	$(GO) test -count=1 -run '^(TestE2EExplorerBrowser|TestE2EExplorerAccounts|TestEthAPIMatchesLedger)$$/^screenshots$$' ./e2e -args -update-screenshots

## fuzz: longer fuzzing campaigns (FUZZTIME=10m make fuzz)
fuzz:
	@scripts/fuzz.sh $(or $(FUZZTIME),2m)

## bench: initial-sync throughput on a generated regtest chain (not in CI);
## COIN=litecoin: on a litecoind chain made by its wallet (MWEB blocks included)
bench: build
	$(GO) run ./cmd/syncbench -blockbook bin/blockbook $(if $(filter litecoin,$(COIN)),-coin=litecoin -txs=1000)

## torture: every torture campaign at full size (docs/reliability.md; not in CI,
## which runs their short versions). TORTURE_FLAGS=-torture.kills=10 and the like
## change one campaign's size; TORTURE_RUN=Soak runs one campaign.
TORTURE_RUN ?= .
torture: build
	BLOCKBOOK_ARTIFACTS=$(CURDIR)/artifacts $(GO) test -count=1 -v -timeout 0 -run '^TestTorture($(TORTURE_RUN))' ./e2e -args -torture.full $(TORTURE_FLAGS)

## deb: one Debian package per coin in bin/deb (DEB_COINS=bitcoin,ethereum for some)
DEB_COINS ?= all
deb: build
	@scripts/install-deps.sh deb
	$(GO) run ./build/mkdeb -binary bin/blockbook -coins $(DEB_COINS) -version $(VERSION) -out bin/deb

## test-deb: install bin/deb's bitcoin_regtest package (root) and run its unit's command line
test-deb:
	dpkg -i $$(ls -t bin/deb/blockbook-bitcoin-regtest_*.deb | head -1)
	CI=true $(GO) test -count=1 -v ./build/pkgtest

clean:
	rm -rf bin tools/js/node_modules tools/js/generated
