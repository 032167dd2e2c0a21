# fwlab: make run starts the dashboard, make test runs every test.
GO      ?= go
ADDR    ?= localhost:8080
PKGS    := ./...

.PHONY: run build test test-race check-format check-generated bench generate vendor clean

## run: start the dashboard on its built-in scenarios at http://$(ADDR)
run:
	$(GO) run ./cmd/dashboard serve -addr $(ADDR)

## build: build the dashboard binary into bin/
build:
	$(GO) build -o bin/dashboard ./cmd/dashboard

## test: formatting, vet, generated files, every test (browser tests included), race detector on the concurrent packages
test: check-format check-generated
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -race -timeout 15m ./internal/session/... ./internal/server/... ./internal/solver/...

check-format:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './web/node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## check-generated: the committed *_templ.go files match their .templ sources
check-generated:
	@sh scripts/check-generated.sh

## bench: benchmarks (figures are ratios against baselines measured in the same run), then
## the table of their targets (bench/targets.tsv), also written to BENCHMARKS.md
BENCH       ?= .
BENCH_COUNT ?= 3
bench:
	@mkdir -p bin
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(BENCH_COUNT) -timeout 60m $(PKGS) 2>&1 | tee bin/bench.txt
	$(GO) run ./cmd/benchtable -targets bench/targets.tsv -in bin/bench.txt -out BENCHMARKS.md \
		-cmd "make bench BENCH='$(BENCH)' BENCH_COUNT=$(BENCH_COUNT) PKGS='$(PKGS)'"

## generate: regenerate the templ pages
generate:
	$(GO) tool templ generate -path web/templates

## vendor: refresh the vendored chart library from the npm registry (needs npm)
vendor:
	cd web && sh vendor.sh

clean:
	rm -rf bin
