#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. every Go package, with the race detector (includes the end-to-end collector tests);
#   2. test/readers: the datasets read by DuckDB and Apache Arrow (a module of its own, cgo);
#   3. test/node: record an agent run through the collector with the real openai SDK and three
#      GenAI instrumentations, then replay it offline through the replay extension.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}

go test -race ./...
(cd test/readers && go test ./...)

bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
go build -o "$bin_dir/reprise" ./cmd/reprise
(cd test/node && npm ci --no-audit --no-fund --loglevel=error && REPRISE_BIN="$bin_dir/reprise" npm test)
