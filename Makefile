# ClusterSpace: `make run` sets up and opens the app; `make test` sets up and runs every test.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

BASE_VERSION := 0.1.0
VERSION ?= $(BASE_VERSION)+$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
BIN     := build/bin/clusterspace
# Wails builds the desktop window only with these tags; webkit2_41 links WebKitGTK 4.1 (Debian 12+).
TAGS    := desktop,production,webkit2_41
LDFLAGS := -w -s -X main.version=$(VERSION)
ARTIFACTS := test-artifacts
# Packages (under backend/) whose goroutines and locks are the core of the app: they run under
# the race detector; every other package runs without it. Name each one here only.
# "llm/..." takes a package with everything below it.
RACE_PKGS := pubsub store workspace panes server tools config terminal policy egress agent chat browser/... goal/... llm/... keyenv fleet plugins mcp/...
empty :=
space := $(empty) $(empty)
RACE_PATHS := $(addprefix ./backend/,$(RACE_PKGS))
RACE_REGEX := /backend/($(subst /...,(/.*)?,$(subst $(space),|,$(RACE_PKGS))))$$
SERVE_ARGS ?=

.PHONY: setup frontend build package run serve test test-go test-frontend test-e2e bench clean docs

setup:
	@scripts/setup.sh

frontend: setup
	cd frontend && npm run build

build: frontend
	go build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .
	@# Without the Wails tags a binary cannot open a window; make that impossible to miss.
	@$(BIN) --version | grep -q 'desktop,' || { echo "make: $(BIN) was built without the desktop window (Wails tags missing)" >&2; exit 1; }
	@$(BIN) --version

# The Debian package of the desktop build: build/clusterspace_<version>_amd64.deb.
package: build
	@scripts/package.sh $(BIN) $(VERSION) build

run: build
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
		exec $(BIN); \
	else \
		echo "No display (DISPLAY/WAYLAND_DISPLAY unset): starting the headless server instead."; \
		exec $(BIN) serve $(SERVE_ARGS); \
	fi

serve: build
	exec $(BIN) serve $(SERVE_ARGS)

test: build
	@mkdir -p $(ARTIFACTS)
	$(MAKE) --no-print-directory test-frontend
	$(MAKE) --no-print-directory test-go
	@scripts/count-tests.sh $(ARTIFACTS)

test-frontend:
	@mkdir -p $(ARTIFACTS)
	cd frontend && npm run check && npm test 2>&1 | tee ../$(ARTIFACTS)/frontend-test.log

# Every Go test, verbose into a log; a skipped test fails the run (a missing dependency must be
# installed by scripts/setup.sh, not skipped).
# The real agent CLIs the end-to-end tests drive (Claude Code, Codex CLI) are installed first,
# at the versions pinned in scripts/agents.sh, into build/agents; a version npm does not serve
# stops the run here, naming it.
test-go:
	@mkdir -p $(ARTIFACTS)
	@scripts/agents.sh
	go vet ./...
	go test -race -count=1 -v $(RACE_PATHS) 2>&1 | tee $(ARTIFACTS)/go-test-race.log | scripts/test-summary.sh
	CLUSTERSPACE_BIN=$(CURDIR)/$(BIN) CLUSTERSPACE_ARTIFACTS=$(CURDIR)/$(ARTIFACTS) \
		go test -count=1 -v -timeout 15m $$(go list ./... | grep -v -E '$(RACE_REGEX)') 2>&1 \
		| tee $(ARTIFACTS)/go-test.log | scripts/test-summary.sh

# Each benchmark runs BENCH_COUNT times; the summary prints medians. The benchmarks at the top
# drive the built binary as a person would (first paint of the desktop window under Xvfb,
# keystroke echo in the served UI in headless Chromium and in the desktop window), one measured
# run per count.
# The first paint is also measured against its floor: a Wails window with one static page
# (scripts/paintfloor, same tags), launched alternately with ours, FLOOR_PAIRS pairs in one run.
BENCH_COUNT ?= 5
FLOOR_PAIRS ?= 11
bench: build
	@mkdir -p $(ARTIFACTS)
	go build -tags $(TAGS) -ldflags "-w -s" -o build/bin/paintfloor ./scripts/paintfloor
	go test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./backend/... | tee $(ARTIFACTS)/bench.log
	CLUSTERSPACE_BIN=$(CURDIR)/$(BIN) CLUSTERSPACE_ARTIFACTS=$(CURDIR)/$(ARTIFACTS) \
		go test -run '^$$' -bench 'DesktopFirstPaint|ServedKeystrokeEcho|DesktopKeystrokeEcho' -benchtime 1x -count $(BENCH_COUNT) . \
		| tee -a $(ARTIFACTS)/bench.log
	CLUSTERSPACE_BIN=$(CURDIR)/$(BIN) CLUSTERSPACE_FLOOR_BIN=$(CURDIR)/build/bin/paintfloor \
		go test -run '^$$' -bench 'DesktopPaintFloor' -benchtime $(FLOOR_PAIRS)x -count 1 . \
		| tee -a $(ARTIFACTS)/bench.log
	@scripts/bench-summary.sh < $(ARTIFACTS)/bench.log

clean:
	rm -rf build/bin build/*.deb frontend/dist $(ARTIFACTS)

# docs/cli.md is generated from the commands' own --help (backend/cli/help.go); `go test ./docs`
# fails when it is stale, and this rewrites it.
docs:
	go test -count=1 -run '^TestCLIReference$$' ./docs -update
