# Causeway — the two commands that matter are `make run` and `make test`.

# go.temporal.io/server needs a newer Go than some machines pin; let the go
# command fetch the toolchain go.mod asks for.
export GOTOOLCHAIN := auto
# Pure-Go builds: SQLite is the modernc driver, nothing needs cgo.
export CGO_ENABLED := 0

GO        ?= go
SCENARIOS ?= ../shared/scenarios/public
FUZZTIME  ?= 2s
BENCHTIME ?= 3000x
# Investigation passes take a third of a second each; 50 give a stable mean.
BENCHPASSES ?= 50x
FUZZ_TARGETS := FuzzCustom FuzzDatadog FuzzAlertmanager FuzzGrafana FuzzPagerduty FuzzSNS FuzzSentry FuzzNewrelic FuzzOpsgenie FuzzAzure FuzzGCP

.PHONY: run test unit fuzz test-faults build lint fmt bench eval migrate clean

## run: the whole product on this machine — API, worker, embedded Temporal + UI, SQLite in ./data
run:
	$(GO) run ./cmd/causeway run

## test: every test (PostgreSQL when CAUSEWAY_TEST_DATABASE_URL is set, else SQLite), then a short fuzz of every normalizer
test: unit fuzz

unit:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

fuzz:
	@FUZZTIME=$(FUZZTIME) ./scripts/fuzz $(FUZZ_TARGETS)

## test-faults: stop PostgreSQL, Temporal, Redis, the LLM endpoint and the worker under a running Causeway (private instances; ~8 min)
test-faults:
	$(GO) vet -tags faults ./e2e
	$(GO) test -tags faults -count=1 -timeout 20m -run '^TestFault' ./e2e

## build: the three binaries into ./bin
build:
	$(GO) build -trimpath -o bin/ ./cmd/...

## lint: vet, formatting, and staticcheck when installed
lint:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed; skipped"; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

## bench: performance goals (ingest vs raw insert, investigation overhead, analytics, analyzer)
bench:
	$(GO) test -run='^$$' -bench=. -benchtime=$(BENCHTIME) -timeout 60m ./api ./models ./analyzer
	$(GO) test -run='^$$' -bench=. -benchtime=$(BENCHPASSES) -timeout 30m ./e2e

## eval: run the example scenarios through the real pipeline and print accuracy
eval:
	$(GO) run ./cmd/causeway eval $(SCENARIOS)

## migrate: create or update the schema of CAUSEWAY_DATABASE_URL (or the SQLite file)
migrate:
	$(GO) run ./cmd/causeway migrate

clean:
	rm -rf bin
