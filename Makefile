# Causeway — the two commands that matter are `make run` and `make test`.

# go.temporal.io/server needs a newer Go than some machines pin; let the go
# command fetch the toolchain go.mod asks for.
export GOTOOLCHAIN := auto
# Pure-Go builds: SQLite is the modernc driver, nothing needs cgo (the race
# detector is the one exception, see test-race).
export CGO_ENABLED := 0

GO        ?= go
SCENARIOS ?= analyzer/testdata/public
FUZZTIME  ?= 2s
BENCHTIME ?= 3000x
# Investigation passes take a third of a second each; 50 give a stable mean.
BENCHPASSES ?= 50x
# package:target for every fuzz test; `make fuzz` runs each for FUZZTIME.
FUZZ_TARGETS := $(addprefix ./providers:,FuzzCustom FuzzDatadog FuzzAlertmanager FuzzGrafana FuzzPagerduty FuzzSNS FuzzSentry FuzzNewrelic FuzzOpsgenie FuzzAzure FuzzGCP) \
	./analyzer:FuzzInvestigate
# The packages whose code runs concurrently: request handlers, the limiter, the
# service layer and the domain slices (their services, sweeps, dispatchers and
# activities).
RACE_PKGS := ./service/... ./ratelimit/... ./api/... ./investigation/... ./remediation/... ./delivery/... ./slack/... ./identity/... ./temporalx/... ./ui/... ./llm/... ./models/... ./datasources/...

# Tools are installed at pinned versions into a directory of this checkout, so
# `make lint` runs the same checks everywhere and never depends on what happens
# to be on PATH. Each binary carries its version in its name: bumping a version
# installs the new one.
TOOLS                 := $(CURDIR)/.tools/bin
STATICCHECK_VERSION   := v0.8.2
WORKFLOWCHECK_VERSION := v0.6.0
HELM_VERSION          := v3.22.0
STATICCHECK   := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
WORKFLOWCHECK := $(TOOLS)/workflowcheck-$(WORKFLOWCHECK_VERSION)
HELM          := $(TOOLS)/helm-$(HELM_VERSION)
CHART         := deploy/helm/causeway

.PHONY: run demo test unit fuzz test-race test-faults build lint fmt helm-check tools bench eval migrate screenshots clean

## run: the whole product on this machine — API, worker, embedded Temporal + UI, SQLite in ./data
run:
	$(GO) run ./cmd/causeway run

## demo: make run plus a real Prometheus holding a bundled scenario; an alert is investigated from its live data
demo:
	$(GO) run ./cmd/causeway demo

## test: every test (PostgreSQL when CAUSEWAY_TEST_DATABASE_URL is set, else SQLite), then a short fuzz of every fuzz target
test: unit fuzz

unit:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

fuzz:
	@FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz $(FUZZ_TARGETS)

## test-race: the concurrent packages under the race detector (needs a C compiler)
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)

## test-faults: stop PostgreSQL, Temporal, Redis, the LLM endpoint and the worker under a running Causeway (private instances; ~8 min)
test-faults:
	$(GO) vet -tags faults ./e2e
	$(GO) test -tags faults -count=1 -timeout 20m -run '^TestFault' ./e2e

## build: the three binaries into ./bin
build:
	$(GO) build -trimpath -o bin/ ./cmd/...

## lint: vet, gofmt, staticcheck (the fault tests too), workflowcheck, a tidy go.mod, comments that cite only this repository's documents, and imports that never climb a layer
lint: $(STATICCHECK) $(WORKFLOWCHECK)
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags faults ./e2e
	$(WORKFLOWCHECK) ./...
	$(GO) mod tidy -diff
	./scripts/check-doc-refs
	./scripts/check-imports

fmt:
	gofmt -w $$(git ls-files '*.go')

## helm-check: lint the Helm chart and render it with its default and its alternative values
helm-check: $(HELM)
	HELM=$(HELM) ./scripts/helm-check $(CHART)

## tools: install the pinned lint and chart tools into .tools/bin
tools: $(STATICCHECK) $(WORKFLOWCHECK) $(HELM)

$(STATICCHECK):
	./scripts/install-tool $@ honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(WORKFLOWCHECK):
	./scripts/install-tool $@ go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

$(HELM):
	./scripts/install-tool $@ helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

## bench: every performance goal in one run (ingest vs raw insert, duplicate storm, investigation vs the bare-Temporal floor, 200-alert burst vs the floor and vs serial, a quiet tenant during a storm, the drain after kill -9, 1M-row list and analytics, analyzer, gathering), then one table of ratios against their targets; marked not a result when the load average is above 1.5 at the start
bench:
	GO=$(GO) BENCHTIME=$(BENCHTIME) BENCHPASSES=$(BENCHPASSES) ./scripts/bench

## screenshots: drive the dashboard in headless Chromium and keep a picture of every main page in test-output/screenshots
screenshots:
	CAUSEWAY_SCREENSHOTS_DIR=$(CURDIR)/test-output/screenshots $(GO) test -count=1 -run '^TestDashboard$$' -v -timeout 15m ./e2e

## eval: run the example scenarios through the real pipeline and print accuracy
eval:
	$(GO) run ./cmd/causeway eval $(SCENARIOS)

## migrate: create or update the schema of CAUSEWAY_DATABASE_URL (or the SQLite file)
migrate:
	$(GO) run ./cmd/causeway migrate

clean:
	rm -rf bin .tools
