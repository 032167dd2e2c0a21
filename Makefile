# fwlab: make run starts the dashboard, make test runs every test.
GO      ?= go
ADDR    ?= localhost:8080
PKGS    := ./...

.PHONY: run build build-openblas test test-declared test-race fuzz loadtest check-format check-generated check-size check-clean bench generate vendor clean

## run: start the dashboard on its built-in scenarios at http://$(ADDR)
run:
	$(GO) run ./cmd/dashboard serve -addr $(ADDR)

## build: build the dashboard binary into bin/
build:
	$(GO) build -o bin/dashboard ./cmd/dashboard

## build-openblas: the same binary with gonum's BLAS calls done by OpenBLAS (cgo;
## Debian: apt-get install gcc libopenblas-dev) into bin/dashboard-openblas
build-openblas:
	CGO_ENABLED=1 $(GO) build -tags openblas -o bin/dashboard-openblas ./cmd/dashboard

# -parallel 4: the tests that call t.Parallel (those of cmd/dashboard and
# internal/queue that drive workers, most browser tests and their two stores'
# cases) mostly wait on processes, heartbeats, timers and pages, so four of
# them at once share two cores well; every other test runs one at a time in
# its package, before them. The packages of the race part (RACE_PKGS below)
# are left out here: test-race runs each of their tests once, under the
# detector or, for the few it distorts, without it. The tests ALONE names run
# after the package tests, in a go test of their own.
## test: formatting, vet, generated files, every test (browser tests included), race detector on the concurrent packages, a short run of every fuzz target of the inputs
test: check-format check-generated check-size
	$(GO) vet $(PKGS)
	@set -e; race=$$(mktemp); trap 'rm -f "$$race"' EXIT; \
	$(GO) list $(RACE_PKGS) > "$$race"; all=$$($(GO) list $(PKGS)); \
	pkgs=$$(printf '%s\n' "$$all" | grep -vxF -f "$$race" || true); \
	if [ -n "$$pkgs" ]; then \
		echo "$(GO) test -count=1 -timeout 20m -parallel 4 -skip '$(ALONE)' <$(PKGS) but the race part's packages>"; \
		$(GO) test -count=1 -timeout 20m -parallel 4 -skip '$(ALONE)' $$pkgs; fi
	$(GO) test -count=1 -timeout 10m -run '$(ALONE)' $(ALONE_PKGS)
	@if [ -z "$$CI" ] && { [ "$$FWLAB_CHROMIUM" = none ] || { [ -z "$$FWLAB_CHROMIUM" ] && [ ! -x /usr/bin/chromium ] && [ ! -x /usr/bin/chromium-browser ] && ! command -v chromium >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; }; }; then \
		echo "*** make test: no Chromium found, so the browser tests in internal/e2e were SKIPPED (install Debian's chromium or set FWLAB_CHROMIUM; with CI set they fail instead) ***"; fi
	@if [ -z "$$CI" ] && { ! command -v "$$($(GO) env CC)" >/dev/null 2>&1 || { ! pkg-config --exists openblas 2>/dev/null && ! ls /usr/lib/*/libopenblas.so /usr/lib64/libopenblas.so /usr/lib/libopenblas.so /usr/local/lib/libopenblas.so 2>/dev/null | grep -q .; }; }; then \
		echo "*** make test: no C compiler or no OpenBLAS found, so the check that make build-openblas gives the same traces was SKIPPED (Debian: apt-get install gcc libopenblas-dev; with CI set it fails instead) ***"; fi
	@if [ -z "$$CI" ] && [ -z "$$FWLAB_PG_BIN" ] && [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then \
		echo "*** make test: no PostgreSQL 15 found, so the tests of the PostgreSQL store, the queue and dashboard worker were SKIPPED (Debian: apt-get install postgresql, or set FWLAB_PG_BIN; with CI set they fail instead) ***"; fi
	$(MAKE) --no-print-directory test-race
	$(MAKE) --no-print-directory test-declared
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory check-clean

# ALONE: the tests that compare what a page says with the wall clock, beside
# a CPU-bound competitor of their own, and so need the rest of the machine's
# load to stay as it is while they run. Beside the other packages' tests, one
# of them starting or ending moved a run's rate by half or more:
# TestTimeLeftUnderLoad (the run page's time left, within a factor of 2 of
# the time the run then took: 0.80 to 1.37 of it alone, 2.1 once beside the
# package tests). They run in a go test of their own, after the package
# tests; internal/archtest checks that each name is a test of ALONE_PKGS.
ALONE_PKGS := ./internal/e2e/
ALONE := ^(TestTimeLeftUnderLoad)$$

# The race detector runs over the packages with concurrent code: live runs
# and their sessions, the server's streams and handlers, the solvers' worker
# goroutines, both stores and the bundle import's writer and digester. Their
# tests run here only (make test's package tests leave these packages out).
# RACE_OFF names the tests that run one goroutine's code over large inputs or
# measure memory or wall-clock time, which the detector slows five- to
# twentyfold and whose figures it distorts; they run without it, in a second
# go test of the same packages, as does TestFinishedRunsLeaveTheHeap (heap
# figures; it skips itself under the detector):
# TestImportMemoryIsBounded (peak RSS of a 400 000-record import),
# TestEveryTruncationIsRefused (Decode of every prefix of a bundle),
# TestEncoderForm, TestCanonicalIsTheEncoders, TestScannerReadsAsEncodingJSON and
# TestFastFloatIsParseFloat (the record scanner held to encoding/json, strconv and
# the encoder over some hundred thousand random inputs, on one goroutine: 40 s under
# the detector),
# TestFigureOfALongRunStreams (peak RSS of a 600 000-record figure),
# TestFigureExport (drawing SVG, PNG and PDF), TestForcedEvaluationsLeaveTheCadence,
# TestDefaultCadence, TestCDMatchesFISTA, TestCDPathMatchesFISTA and
# TestCDPathReproducible (the solvers' iterations on one goroutine, some
# hundred thousand of them: 45 s under the detector; the runs with worker
# goroutines stay under it), TestDamagedStoreIsRefusedCheckedAndSalvaged,
# TestOpensEveryEarlierVersion and TestDiskUsageCountsTheLogAndALargeDeleteTruncatesIt
# (SQLite's integrity checks, migrations and vacuum on one goroutine: 19 s under
# the detector), TestHistoryFillSQLite (800 runs written one by one and listed
# under every History filter, on one goroutine: 22 s under the detector),
# TestSQLiteBulk (the conformance suite's bulk checks on SQLite: runs
# written, deleted and paged through by cursor under every filter, on one
# goroutine: 23 s under the detector, 1.5 s without; the PostgreSQL store
# runs them under it),
# TestNeverReadingClientsBoundMemory
# (the server's heap beside 100 never-reading websocket clients of a 300 000-record
# run: 60 s under the detector, whose shadow memory the heap figure does not see; the
# same blocked writers run under it in TestNeverReadingClient and
# TestTooSlowClientIsClosedWith1013), and TestHistoryTimeLeftIsWallClock
# (History's time left against the wall clock beside a CPU-bound competitor on
# every core: under the detector on a busy 2-core machine its run did not end
# within the test's 5 minutes). internal/archtest checks that every test of
# these packages that looks at raceEnabled is named in RACE_OFF, and that
# every name in RACE_OFF is a test of these packages.
RACE_PKGS := ./internal/session/... ./internal/server/... ./internal/solver/... ./internal/store/... ./internal/bundle/...
RACE_OFF := ^(TestImportMemoryIsBounded|TestEveryTruncationIsRefused|TestEncoderForm|TestCanonicalIsTheEncoders|TestScannerReadsAsEncodingJSON|TestFastFloatIsParseFloat|TestFigureOfALongRunStreams|TestFigureExport|TestNeverReadingClientsBoundMemory|TestHistoryTimeLeftIsWallClock|TestFinishedRunsLeaveTheHeap|TestForcedEvaluationsLeaveTheCadence|TestDefaultCadence|TestCDMatchesFISTA|TestCDPathMatchesFISTA|TestCDPathReproducible|TestDamagedStoreIsRefusedCheckedAndSalvaged|TestOpensEveryEarlierVersion|TestDiskUsageCountsTheLogAndALargeDeleteTruncatesIt|TestHistoryFillSQLite|TestSQLiteBulk)$$

## test-race: the concurrent packages' tests (run by make test): under the race detector, and RACE_OFF's without it
test-race:
	$(GO) test -count=1 -race -timeout 15m -skip '$(RACE_OFF)' $(RACE_PKGS)
	$(GO) test -count=1 -timeout 15m -run '$(RACE_OFF)' $(RACE_PKGS)

# The test builds that add one record field (recordfields_extra) and one
# algorithm (algos_extra) to their declarations, as a developer would: the
# field travels every path (solve, bundle and digest, both stores, import,
# verify), the added algorithm runs from the spec, the command line and the
# API, and the start and run pages' rules follow the algorithm table.
DECLARED_FIELD_TESTS := ^(TestDeclaredFieldsTravelEveryPath|TestDecodeErrorsNameTheField|TestTableCoversRecord|TestAccessorsReachTheirField|TestCodecReadsVersion1Blob|TestCodecRefusesNewerVersion|TestTodaysBundleKeepsItsDigest|TestNewerBundleRefusedNamingBothVersions|TestSQLite|TestConformance|TestStoreKeepsEveryDeclaredField|TestLiveSendsEveryDeclaredField|TestLiveRecordIsCurrent|TestContentDigestsKept)$$

## test-declared: the tests of a field and an algorithm added to their one declaration (run by make test)
test-declared:
	$(GO) test -count=1 -tags recordfields_extra -run '$(DECLARED_FIELD_TESTS)' ./cmd/dashboard/ ./internal/recordfields/ ./internal/store/... ./internal/bundle/ ./internal/session/
	$(GO) test -count=1 -tags algos_extra -run '^(TestAlgorithmTableFromCLIAndAPI|TestBuiltinVariantsAreTheTable|TestAlgorithmTableDispatch)$$' ./cmd/dashboard/ ./internal/scenarios/
	$(GO) test -count=1 -tags algos_extra -run '^(TestStartPageFollowsAlgorithmTable|TestRunPageFollowsAlgorithmTable)$$' ./internal/e2e/

# The fuzz targets of everything a user or a web page can send: the run
# spec, the data-file parsers, uploads. Each runs FUZZTIME: a number of
# inputs rather than a duration, since with a duration Go 1.26's fuzzing
# can end a target that found nothing with "context deadline exceeded"
# when the machine is busy as the time runs out (fixed in Go 1.27).
FUZZTIME ?= 4000x
FUZZ_TARGETS := \
	./internal/spec:FuzzRunNormalize \
	./internal/dataio:FuzzReadCSV \
	./internal/dataio:FuzzReadSVMLight \
	./internal/ssvm:FuzzReadOCR \
	./internal/ssvm:FuzzParseLetter \
	./internal/server:FuzzCreateRun \
	./internal/server:FuzzUpload \
	./internal/store:FuzzDecodeBatch \
	./internal/bundle:FuzzDecode \
	./internal/bundle:FuzzDecodeRecord \
	./internal/bundle:FuzzDigestRecordField \
	./internal/bundle:FuzzCanonicalRecord \
	./internal/sweep:FuzzSweepDecode

## fuzz: run each input fuzz target for FUZZTIME (default 4000 inputs); the instrumented
## test binary of each package is built once (go test -c -fuzz) and runs its targets in the
## package's folder (its testdata/fuzz seeds) with the cache go test -fuzz uses
fuzz:
	@set -e; bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; \
	cache=$$($(GO) env GOCACHE)/fuzz; last=; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		if [ "$$pkg" != "$$last" ]; then \
			out=$$($(GO) test -c -fuzz . -o "$$bin/fuzz.test" $$pkg 2>&1) || { echo "$$out"; exit 1; }; \
			ipath=$$($(GO) list $$pkg); last=$$pkg; fi; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		out=$$(cd $$pkg && "$$bin/fuzz.test" -test.run '^$$' -test.fuzz "^$$name$$" -test.fuzztime $(FUZZTIME) \
			-test.fuzzcachedir "$$cache/$$ipath" -test.paniconexit0 -test.timeout 10m 2>&1) || \
			{ echo "$$out"; exit 1; }; \
	done

## loadtest: 100 clients against a server on loopback (bounded, stops by itself)
loadtest:
	$(GO) run ./cmd/loadtest

## check-clean: the work tree holds no untracked or changed files (what .gitignore lists
## aside): run last by make test, so a test that writes into the repository (a file
## named after a URL, a stray output) fails it
check-clean:
	@if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		if [ -n "$$CI" ]; then echo "check-clean: not a git work tree"; exit 1; fi; \
		echo "*** make test: not a git work tree, so the check for files left by the tests was SKIPPED ***"; exit 0; fi; \
	out=$$(git status --porcelain --untracked-files=all); \
	if [ -n "$$out" ]; then echo "check-clean: the work tree has untracked or changed files (commit them, add them to .gitignore, or find the test that wrote them):"; echo "$$out"; exit 1; fi

check-format:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './web/node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## check-size: no function past 100 lines (60 in internal/solver and internal/ssvm), tests,
## generated code and the shrinking list in internal/archtest/sizes_test.go aside; prints the
## files past 600 lines, the ones to split by concern
check-size:
	@$(GO) test -count=1 -run '^(TestFunctionSizes|TestSizeCheckCatchesPlantedFunctions)$$' ./internal/archtest/
	@out=$$($(GO) test -count=1 -v -run '^TestFileSizes$$' ./internal/archtest/ 2>&1) || { echo "$$out"; exit 1; }; \
	echo "$$out" | sed -n 's/^ *sizes_test.go:[0-9]*: /check-size: /p'

## check-generated: the committed *_templ.go files match their .templ sources
check-generated:
	@sh scripts/check-generated.sh

## bench: benchmarks (figures are ratios against baselines measured in the same run), then
## the table of their targets (bench/targets.tsv), then the scaling benchmarks (once each, one
## package at a time, CPU time on one core) and the tables of how cost grows with size with
## fitted exponents, all also written to BENCHMARKS.md. SCALING selects the scaling sizes (the sub-benchmarks,
## e.g. 'BenchmarkL1BallScaling/p=(200|500)$'); BENCH never runs the scaling benchmarks.
BENCH         ?= .
BENCH_COUNT   ?= 3
SCALING_BENCH := ^(BenchmarkScaling|BenchmarkL1BallScaling)$$
SCALING       ?= $(SCALING_BENCH)
SCALING_COUNT ?= 1
SCALING_PKGS  := ./internal/problems/gflasso/ ./internal/problems/toy/
bench:
	@mkdir -p bin
	$(GO) test -run '^$$' -bench '$(BENCH)' -skip '$(SCALING_BENCH)' -benchmem -count $(BENCH_COUNT) -timeout 60m $(PKGS) 2>&1 | tee bin/bench.txt
	$(GO) test -p 1 -run '^$$' -bench '$(SCALING)' -benchtime 1x -count $(SCALING_COUNT) -timeout 180m $(SCALING_PKGS) 2>&1 | tee bin/bench-scaling.txt
	$(GO) run ./cmd/benchtable -targets bench/targets.tsv -in bin/bench.txt -scaling bin/bench-scaling.txt -out BENCHMARKS.md \
		-cmd "make bench BENCH='$(BENCH)' BENCH_COUNT=$(BENCH_COUNT) PKGS='$(PKGS)' SCALING='$(SCALING)' SCALING_COUNT=$(SCALING_COUNT)"

## generate: regenerate the templ pages
generate:
	$(GO) tool templ generate -path web/templates

## vendor: refresh the vendored chart library from the npm registry (needs npm)
vendor:
	cd web && sh vendor.sh

clean:
	rm -rf bin
