# sessionvault — the two commands a newcomer needs:
#   make demo   build the binary and run a whole session on a copy of vault-example/
#               (make demo KEEP=1 keeps that vault, to open in Obsidian)
#   make test   run every test (needs Go and git only)
GO      ?= go
BIN     := bin/sessionvault
PKGS    := ./...
# Build tags of the binaries: make build TAGS=portable builds the write path
# macOS and Windows run (see test-portable).
TAGS    ?=
GOTAGS   = $(if $(TAGS),-tags $(TAGS))

.PHONY: build demo test test-portable bench bench-compare stress stress-portable vet fmt clean cross install lint

# The binaries are built without cgo: linked statically, a command starts
# without the dynamic loader and the C library's set-up (about 1 ms of each
# run, make bench). Host and user lookups then use Go's own resolver and
# /etc/passwd reader, as sessionvault-hook (which links no cgo) always has.
build:
	CGO_ENABLED=0 $(GO) build $(GOTAGS) -o $(BIN) ./cmd/sessionvault
	CGO_ENABLED=0 $(GO) build $(GOTAGS) -o $(dir $(BIN))sessionvault-hook ./cmd/sessionvault-hook
	CGO_ENABLED=0 $(GO) build $(GOTAGS) -o $(dir $(BIN))sessionvault-daemon ./cmd/sessionvault-daemon

demo: build
	KEEP=$(KEEP) ./scripts/demo.sh $(BIN)

# Build and vet for every platform Obsidian users are on (CI runs it).
CROSS := linux/amd64 darwin/amd64 darwin/arm64 windows/amd64
cross:
	@for p in $(CROSS); do \
		echo "build and vet $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./cmd/sessionvault ./cmd/sessionvault-hook ./cmd/sessionvault-daemon || exit 1; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet $(PKGS) || exit 1; \
	done

# The linters of .golangci.yml (layer rules, errcheck, staticcheck), with
# golangci-lint built from tools/go.mod: nothing to install by hand.
lint:
	$(GO) tool -modfile=tools/go.mod golangci-lint run ./...

# Install the three binaries into $(go env GOPATH)/bin (on PATH for the
# hooks): sessionvault, sessionvault-hook, and sessionvault-daemon, which
# `sessionvault serve` runs.
install:
	CGO_ENABLED=0 $(GO) install ./cmd/sessionvault ./cmd/sessionvault-hook ./cmd/sessionvault-daemon

# `make test` is the full run: `go test ./...` (the quick tier, about a
# minute), with the corpus tier (tests on real notes kept outside the
# repository) when ../shared/corpus is beside the repository or
# SESSIONVAULT_CORPUS names it (SESSIONVAULT_CORPUS_REQUIRED=1 makes its
# absence fail), the randomised tests at their full sizes
# (SESSIONVAULT_TEST_FULL=1: 100,000 random note merges instead of 20,000, 40
# rounds of two machines' syncs instead of 10, ...), and fuzzing.
CORPUS := $(abspath $(or $(SESSIONVAULT_CORPUS),$(wildcard ../shared/corpus)))
test:
	$(GO) vet $(PKGS)
	SESSIONVAULT_CORPUS=$(CORPUS) SESSIONVAULT_TEST_FULL=1 $(GO) test -count=1 $(PKGS)
	@if [ -n "$(CORPUS)" ]; then echo "corpus tier: ran on $(CORPUS)"; \
	else echo "corpus tier: skipped (no ../shared/corpus beside the repository; set SESSIONVAULT_CORPUS=DIR to run it)"; fi
	# Fuzz budgets are counts, not durations: a -fuzztime duration races the
	# fuzz coordinator's deadline on a loaded machine (golang/go#75804,
	# "context deadline exceeded" with no failing input) before Go 1.27.
	$(GO) test -run '^$$' -fuzz '^FuzzParseIdentity$$' -fuzztime 50000x ./internal/note
	$(GO) test -run '^$$' -fuzz '^FuzzSetGet$$' -fuzztime 50000x ./internal/note
	$(GO) test -run '^$$' -fuzz '^FuzzDelete$$' -fuzztime 50000x ./internal/note
	$(GO) test -run '^$$' -fuzz '^FuzzScalar$$' -fuzztime 50000x ./internal/note

# Concurrent writers beside the engine (DESIGN §10; minutes): each outside
# writer (append, truncate-then-write, rename, stale buffer, git add -A &&
# git commit) as its own process beside update/decide/block loops, with
# kill -9 and --op-id retries; prints a table per scenario, exits 1 on any
# loss. `make test` runs the same scenarios small.
STRESS_FLAGS ?= -updates 200 -decides 50 -blocks 50 -kill 0.15
stress: build
	$(GO) build -o bin/svstress ./cmd/svstress
	./bin/svstress -bin $(BIN) $(STRESS_FLAGS)

# The same stress on the write path of macOS and Windows (the portable build
# tag: no read leases, reads settled by stat data, notes swapped by link and
# rename), built into bin/portable/. Beside writers that never pause it is
# slow and loses lines (docs/platforms.md has the figures); CI runs it small,
# for its table: make stress-portable STRESS_FLAGS='-updates 6 -decides 2
# -blocks 2 -kill 0.15 -scenarios rename,git'
stress-portable:
	$(MAKE) stress TAGS=portable BIN=bin/portable/sessionvault

# The write path of macOS and Windows, on Linux (the portable build tag; see
# docs/platforms.md): the vault's tests, the command-line tests that kill
# processes or run them side by side (their binaries are built with the tag
# too, through GOFLAGS). About a minute.
PORTABLE_RUN := TestConcurrent|TestKill|TestRemoteSyncKilled|TestGitLockHeld|TestOpIDMakesARetryANoOp|TestBadInputAtTheWritePath|TestOSErrorsHaveCodes
test-portable:
	GOFLAGS="$(GOFLAGS) -tags=portable" $(GO) vet ./internal/vault/...
	GOFLAGS="$(GOFLAGS) -tags=portable" $(GO) test -count=1 ./internal/vault/...
	GOFLAGS="$(GOFLAGS) -tags=portable" $(GO) test -count=1 -run '$(PORTABLE_RUN)' ./internal/cli/

# Benchmarks (DESIGN §10): a generated vault of 10,000 notes and 5,000 commits;
# one update to a durable commit in process (fsync, syncfs) and as a CLI
# process, `git add && git commit`, the PreToolUse hook and `git rev-parse
# HEAD`, interleaved, quiet and beside a busy writer; updates on a fresh
# session against one of 10,000 updates (history compaction on: the note's
# size, every update read back, the ratio); then curves against
# vault size, history length and session length (long: the largest vaults
# have 100,000 notes and 50,000 commits). Writes bench.json. Override the
# size with SESSIONVAULT_BENCH_NOTES / SESSIONVAULT_BENCH_COMMITS, or pass
# flags: make bench BENCH_FLAGS=-quick (a small trial), BENCH_FLAGS=-curves=false.
BENCH_FLAGS ?=
bench: build
	$(GO) run ./cmd/svbench -bin $(BIN) $(BENCH_FLAGS)

# Compare the figures of two bench runs: make bench-compare OLD=old.json [NEW=bench.json]
NEW ?= bench.json
bench-compare:
	@test -n "$(OLD)" || { echo "usage: make bench-compare OLD=old.json [NEW=bench.json]"; exit 2; }
	$(GO) run ./cmd/svbench compare $(OLD) $(NEW)

# Regenerate the Linear GraphQL client (integrations/linear/generated.go) from
# operations.graphql + schema/schema.graphql; `make test` fails while it is stale.
.PHONY: generate
generate:
	cd integrations/linear && $(GO) tool genqlient

# The references generated from the code: docs/cli/ (a page per command),
# docs/mcp-tools.md, docs/errors.md, and man pages in bin/man. make test fails
# while they are stale.
.PHONY: docs
docs:
	$(GO) run ./cmd/svdocs -man bin/man docs

fmt:
	gofmt -w cmd internal integrations templates

clean:
	rm -rf bin
