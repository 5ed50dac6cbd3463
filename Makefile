# sessionvault — the two commands a newcomer needs:
#   make demo   build the binary and run a whole session on a copy of vault-example/
#   make test   run every test (needs Go and git only)
GO      ?= go
BIN     := bin/sessionvault
PKGS    := ./...

.PHONY: build demo test bench vet fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/sessionvault
	$(GO) build -o bin/sessionvault-hook ./cmd/sessionvault-hook

demo: build
	./scripts/demo.sh $(BIN)

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)

# Benchmarks (DESIGN §10): a generated vault of 10,000 notes and 5,000 commits;
# one update to a durable commit in process and as a CLI process, against
# `git add && git commit` in the same run. Override the size with
# SESSIONVAULT_BENCH_NOTES / SESSIONVAULT_BENCH_COMMITS.
bench: build
	$(GO) run ./cmd/svbench -bin $(BIN)

# Regenerate the Linear GraphQL client (integrations/linear/generated.go) from
# operations.graphql + schema.graphql; `make test` fails while it is stale.
.PHONY: generate
generate:
	cd integrations/linear && $(GO) tool genqlient

fmt:
	gofmt -w cmd internal integrations templates

clean:
	rm -rf bin
